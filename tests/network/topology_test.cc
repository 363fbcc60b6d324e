#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/astra_config.h"
#include "extern/et_io.h"
#include "network/describe.h"
#include "network/notation.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

TEST(Notation, ParsesEveryBlockAndUnit) {
  auto d = ParseTopologyNotation("Ring(8,200GB/s,50ns)_FullyConnected(4,100GB/s,500ns)_Switch(16,400Gb/s,2us,2)");
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 3u);
  EXPECT_EQ((*d)[0].block, Block::kRing);
  EXPECT_EQ((*d)[1].npus, 4);
  EXPECT_DOUBLE_EQ((*d)[2].bandwidth_gbps, 50);  // 400 Gb/s
  EXPECT_DOUBLE_EQ((*d)[2].latency_ns, 2000);
  EXPECT_EQ((*d)[2].links_per_npu, 2);
  auto t = ParseTopologyNotation("Torus2D(4x8,100GB/s,1us)_Mesh(4,10GB/s,1ms)_RingUni(3,1TB/s,5ns)");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[0].npus, 4);
  EXPECT_EQ((*t)[1].npus, 8);
  EXPECT_EQ((*t)[1].block, Block::kRing);
  EXPECT_EQ((*t)[2].block, Block::kMesh);
  EXPECT_DOUBLE_EQ((*t)[2].latency_ns, 1e6);
  EXPECT_DOUBLE_EQ((*t)[3].bandwidth_gbps, 1024);
  // Formatting and parsing again gives the same dimensions.
  auto again = ParseTopologyNotation(FormatTopologyNotation(t.value()));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(FormatTopologyNotation(again.value()), FormatTopologyNotation(t.value()));
}

TEST(Notation, ErrorsPointAtTheCharacter) {
  struct Bad {
    const char* text;
    const char* message;
    size_t column;
  };
  const Bad cases[] = {
      {"Ring(8,200GB/s,50ns)_Swich(16,50GB/s,2us)", "unknown building block 'Swich' (did you mean 'Switch'?)", 22},
      {"Ring(8 200GB/s,50ns)", "expected ',' after the NPU count", 8},
      {"Ring(8,200GiB/s,50ns)", "unknown bandwidth unit 'GiB/s'", 11},
      {"Ring(8,200GB/s,50sec)", "unknown latency unit 'sec'", 18},
      {"Ring(0,200GB/s,50ns)", "at least 2 NPUs", 1},
      {"Ring(1,200GB/s,50ns)_Switch(4,50GB/s,1us)", "at least 2 NPUs (drop a dimension of 1", 1},
      {"Switch(4,50GB/s,1us)_Ring(1,200GB/s,50ns)", "at least 2 NPUs, 'Ring' has 1", 22},
      {"Ring(8,200GB/s,50ns)Switch(2,1GB/s,1ns)", "expected '_' between dimensions", 21},
  };
  for (const auto& c : cases) {
    auto r = ParseTopologyNotation(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find(c.message), std::string::npos) << m;
    EXPECT_NE(m.find("column " + std::to_string(c.column) + ":"), std::string::npos) << m;
    // The caret line puts '^' under that column.
    const size_t caret = m.rfind('^');
    const size_t line_start = m.rfind('\n', caret) + 1;
    EXPECT_EQ(caret - line_start, 2 + c.column - 1) << m;
  }
}

// A network of one NPU (a one-rank trace) is a single dimension of 1.
TEST(Notation, OneNpuIsASingleDimensionOfOne) {
  auto d = ParseTopologyNotation("Ring(1,200GB/s,50ns)");
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].npus, 1);
}

TEST(Describe, CountsLinksSwitchesAndBisection) {
  auto d = ParseTopologyNotation("Ring(8,200GB/s,50ns)_FullyConnected(4,100GB/s,500ns)_Switch(16,50GB/s,2us)");
  ASSERT_TRUE(d.ok());
  const int n = 512;
  const DimFacts ring = FactsOf((*d)[0], n), fc = FactsOf((*d)[1], n), sw = FactsOf((*d)[2], n);
  EXPECT_EQ(ring.groups, 64);
  EXPECT_EQ(ring.links, 512u);
  EXPECT_DOUBLE_EQ(ring.bisection_gbps, 400);
  EXPECT_EQ(fc.links, 128u * 6);
  EXPECT_DOUBLE_EQ(fc.bisection_gbps, 4 * 100);
  EXPECT_EQ(sw.switches, 32u);
  EXPECT_EQ(sw.links, 512u);
  EXPECT_DOUBLE_EQ(sw.bisection_gbps, 8 * 50);
  // One dimension: 2(p-1)/p * S / B.
  std::vector<Dim> one = {Dim{Block::kSwitch, 8, 50, 0, 1}};
  EXPECT_DOUBLE_EQ(IdealAllReduceSeconds(one, 1 << 30), 2.0 * 7 / 8 * (1 << 30) / (50.0 * (1 << 30)));
}

TEST(NetworkFiles, GeneratedYamlReadsBackInBothFormats) {
  testing::TempDir dir;
  auto d = ParseTopologyNotation("Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)");
  ASSERT_TRUE(d.ok());
  std::string astra;
  ASSERT_TRUE(WriteAstraSimYaml(d.value(), &astra));
  dir.Write("a.yml", astra);
  dir.Write("o.yml", WriteOrreryYaml(d.value()));
  for (const char* f : {"a.yml", "o.yml"}) {
    auto n = ReadAstraNetworkYaml(dir.File(f));
    ASSERT_TRUE(n.ok()) << n.status().message();
    ASSERT_EQ(n->dims.size(), 2u);
    EXPECT_EQ(n->dims[1].block, "Switch");
    EXPECT_DOUBLE_EQ(n->dims[1].latency_ns, 1000);
  }
  auto mesh = ParseTopologyNotation("Mesh(4,100GB/s,500ns)");
  ASSERT_TRUE(mesh.ok());
  EXPECT_FALSE(WriteAstraSimYaml(mesh.value(), &astra));  // no ASTRA-sim equivalent
  dir.Write("bad.yml",
            "dims:\n  - block: Mesh\n    npus: 4\n    bandwidth_gbps: 10\n    latency_ns: 1\n    lanes: 2\n");
  auto bad = ReadAstraNetworkYaml(dir.File("bad.yml"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown key 'lanes'"), std::string::npos) << bad.status().message();
}

// A send from rank 0 to rank 3 on each new block, both backends.
TEST(NewBlocks, MeshAndUnidirectionalRingHops) {
  const uint64_t bytes = 1 << 20;
  const double x = bytes / GiBpsToBytesPerNs(100);
  struct Case {
    const char* net;
    int dst;
    Tick unaware;
    Tick aware;
  };
  const Case cases[] = {
      {"Mesh(8,100GB/s,100ns)", 3, static_cast<Tick>(3 * 100 + x), 3 * static_cast<Tick>(100 + x)},
      {"Mesh(8,100GB/s,100ns)", 7, static_cast<Tick>(7 * 100 + x), 7 * static_cast<Tick>(100 + x)},  // no wrap
      {"RingUni(8,100GB/s,100ns)", 7, static_cast<Tick>(7 * 100 + x), 7 * static_cast<Tick>(100 + x)},
      {"Ring(8,50GB/s,100ns,2)", 7, static_cast<Tick>(100 + x), static_cast<Tick>(100 + x)},  // 2 links = 100 GB/s
  };
  for (const auto& c : cases) {
    testing::TempDir d;
    d.Write("system.json", R"({"preferred-dataset-splits": 1})");
    ChakraProtoMsg::GlobalMetadata md;
    for (int r = 0; r < 8; ++r) {
      EtWriter w;
      ASSERT_TRUE(w.Open(d.File("trace." + std::to_string(r) + ".et"), md).ok());
      if (r == 0 || r == c.dst) {
        ChakraProtoMsg::Node n;
        n.set_id(1);
        n.set_type(r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
        auto* a = n.add_attr();
        a->set_name(r == 0 ? "comm_dst" : "comm_src");
        a->set_int32_val(r == 0 ? c.dst : 0);
        a = n.add_attr();
        a->set_name("comm_size");
        a->set_uint64_val(bytes);
        ASSERT_TRUE(w.Write(n).ok());
      }
      ASSERT_TRUE(w.Close().ok());
    }
    for (const char* be : {"analytical", "congestion-aware"}) {
      RunConfig cfg;
      cfg.files.workload_prefix = d.File("trace");
      cfg.files.network = c.net;  // the notation is accepted directly
      cfg.files.system = d.File("system.json");
      cfg.run.backend = be;
      auto r = RunSimulation(cfg, DefaultBackends());
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->per_npu[c.dst].finished_ns, std::string(be) == "analytical" ? c.unaware : c.aware)
          << c.net << " -> " << c.dst << " on " << be;
    }
  }
}

}  // namespace
}  // namespace orrery
