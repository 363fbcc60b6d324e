// Heterogeneous clusters (--heterogeneity; core/heterogeneity.h, docs/formats.md
// "Heterogeneous clusters"): NPUs at their own compute speed and NPU links at
// their own bandwidth, each case against times worked out by hand.
#include <gtest/gtest.h>

#include "core/units.h"
#include "gen/toy_traces.h"
#include "run/run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick Trunc(double x) { return static_cast<Tick>(x); }

Result<RunReport> RunHet(const TempDir& d, const std::string& backend = "analytical") {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.heterogeneity = d.File("het.yml");
  c.run.backend = backend;
  return RunSimulation(c, DefaultBackends());
}

std::string Failure(const Result<RunReport>& r) { return r.ok() ? "(ran)" : r.status().message(); }

// One COMP node per rank: replayed for `micros`, or (num_ops > 0) under the roofline.
void WriteCompute(const TempDir& d, int npus, uint64_t micros, uint64_t num_ops = 0) {
  testing::WriteTraces(d, npus, [&](int) {
    auto n = testing::MakeNode(0, ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(micros);
    if (num_ops > 0) {
      testing::SetAttr(&n, "num_ops", num_ops);
      testing::SetAttr(&n, "tensor_size", uint64_t{1000});
    }
    return std::vector<ChakraProtoMsg::Node>{n};
  });
}

// Replayed durations divided by the speed; unlisted ranks at 1.
TEST(Heterogeneity, ComputeSpeedScalesReplayedDurations) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteCompute(d, 4, 100);  // 100 us = 100,000 ns
  d.Write("het.yml", "compute:\n  - ranks: \"2-3\"\n    speed: 0.5\n  - ranks: [0]\n    speed: 4\n");
  auto r = RunHet(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 25000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, 100000u);
  EXPECT_EQ(r->per_npu[2].finished_ns, 200000u);
  EXPECT_EQ(r->per_npu[3].finished_ns, 200000u);
  // Every rank the same graph, but not the same speed: one rank class per speed, and the report says so.
  EXPECT_EQ(r->rank_classes, 3) << r->symmetry_note;
  EXPECT_NE(r->symmetry_note.find("3 rank classes"), std::string::npos) << r->symmetry_note;
  EXPECT_NE(r->symmetry_note.find("2 split off by their --heterogeneity compute speed"), std::string::npos)
      << r->symmetry_note;
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0],
            "heterogeneity: 3 NPU(s) at their own compute speed, 0 NPU link(s) at their own bandwidth, from " +
                d.File("het.yml"));
}

// The configuration's hash covers what the file sets: two files that set different speeds
// hash apart, a file that sets nothing hashes as no file (and so do the hashes of older runs).
TEST(Heterogeneity, TheConfigHashCoversTheFile) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteCompute(d, 4, 100);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  auto plain = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  std::vector<std::string> hashes;
  for (const char* speed : {"0.5", "0.25"}) {
    d.Write("het.yml", std::string("compute:\n  - ranks: 2\n    speed: ") + speed + "\n");
    auto r = RunHet(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NE(r->config_hash, plain->config_hash) << speed;
    hashes.push_back(r->config_hash);
  }
  EXPECT_NE(hashes[0], hashes[1]);
  d.Write("het.yml", "compute: []\n");
  auto none = RunHet(d);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->config_hash, plain->config_hash);
}

// A replayed 10^14 ns at speed 10^-6 would take 10^20 ns, past 2^64: refused, naming rank and node.
TEST(Heterogeneity, ASlowSpeedPastTheEndOfTimeIsRefused) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteCompute(d, 4, 100000000000);  // 10^11 us
  d.Write("het.yml", "compute:\n  - ranks: 1\n    speed: 0.000001\n");
  auto r = RunHet(d);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("simulated time would exceed 2^64 ns at rank 1 node 0 (COMP duration at its "
                                      "--heterogeneity speed 1e20 ns at t=0 ns)"),
            std::string::npos)
      << r.status().message();
}

// Under the roofline: 10^9 operations at 100 TFLOP/s take 10,000 ns; at speed 0.5, 20,000.
TEST(Heterogeneity, ComputeSpeedScalesTheRoofline) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600, 1, R"(, "roofline-enabled": 1, "peak-perf": 100)"));
  WriteCompute(d, 2, 0, 1000000000);
  d.Write("het.yml", "compute:\n  - ranks: 1\n    speed: 0.5\n");
  auto r = RunHet(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 10000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, 20000u);
}

// Ring(2) x Ring(2): dim 0 at 100 GB/s and 500 ns, dim 1 at 50 GB/s and 1000 ns;
// the hierarchical model charges a message across both dimensions on each.
const char* kNet2x2 =
    "topology: [ Ring, Ring ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n";
const char* kSys2x2 = R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 1600,
  "all-reduce-implementation": ["ring", "ring"], "group-collective-model": "hierarchical"})";

// A message 0 -> 3 goes 0 -> 1 in dim 0, then 1 -> 3 in dim 1: a slow dim-1 link on rank 3
// or on rank 1 slows its second leg only; 0 -> 2 (dim 1, ranks 0 and 2) keeps its speed.
TEST(Heterogeneity, ALinkSlowsTheLegsThatUseIt) {
  const uint64_t S = 1 << 20;
  const double bw0 = GiBpsToBytesPerNs(100), bw1 = GiBpsToBytesPerNs(50);
  for (const int slow : {3, 1}) {
    TempDir d;
    d.Write("network.yml", kNet2x2);
    d.Write("system.json", kSys2x2);
    d.Write("het.yml", "links:\n  - ranks: " + std::to_string(slow) + "\n    dim: 1\n    bandwidth: 0.5\n");
    testing::WriteP2PTraces(d, 4, {{0, 3, S, 1}});
    auto r = RunHet(d);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->per_npu[3].finished_ns, Trunc(500 + S / bw0) + Trunc(1000 + S / (bw1 * 0.5))) << "slow " << slow;
    testing::WriteP2PTraces(d, 4, {{0, 2, S, 1}});
    auto other = RunHet(d);
    ASSERT_TRUE(other.ok()) << other.status().message();
    EXPECT_EQ(other->per_npu[2].finished_ns, Trunc(1000 + S / bw1)) << "slow " << slow;
  }
}

// A ring all-reduce on 2 NPUs where rank 1's link runs at a quarter: both of its
// steps (one each way) run at a quarter, since a leg takes the slower of its ends.
// Reduce-scatter then all-gather, one step of S/2 each, the endpoint delay per
// step and to start, and one reduction of S/2 (three accesses at 1600 B/ns).
TEST(Heterogeneity, ACollectiveRunsAtItsSlowestLink) {
  const uint64_t S = 1 << 20;
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  ASSERT_TRUE(WriteSingleCollectiveTraces(2, CollectiveKind::kAllReduce, S, d.File("trace")).ok());
  d.Write("het.yml", "links:\n  - ranks: [1]\n    dim: 0\n    bandwidth: 0.25\n");
  auto r = RunHet(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double bw = GiBpsToBytesPerNs(100) * 0.25;
  const Tick step = Trunc(500 + (S / 2) / bw) + 10;
  const Tick expect = 10 + 2 * step + 3 * Trunc((S / 2) / 1600.0);
  EXPECT_EQ(r->per_npu[0].finished_ns, expect);
  EXPECT_EQ(r->per_npu[1].finished_ns, expect);
  // A factor of 1 is the configured bandwidth: the same as no file at all.
  d.Write("het.yml", "links:\n  - ranks: [1]\n    dim: 0\n    bandwidth: 1\n");
  auto same = RunHet(d);
  auto plain = testing::RunIn(d);
  ASSERT_TRUE(same.ok() && plain.ok());
  EXPECT_EQ(same->per_npu[1].finished_ns, plain->per_npu[1].finished_ns);
}

// Every rule of the file, with its message.
TEST(Heterogeneity, BadFilesAreRefusedNamingLineValueAndWhatIsAllowed) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 100, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  WriteCompute(d, 4, 100);
  const std::string f = d.File("het.yml");
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {"compte:\n  - ranks: 1\n    speed: 2\n",
       f + ":1: compte: unknown key 'compte' (did you mean 'compute'?); valid keys: compute, links"},
      {"compute:\n  - ranks: 4\n    speed: 2\n",
       f + ":2: ranks = \"4\": out of range; allowed: an integer >= 0 and <= 3"},
      {"compute:\n  - ranks: \"3-1\"\n    speed: 2\n",
       f + ":2: ranks = 3-1: an empty range; allowed: \"a-b\" with a <= b"},
      {"compute:\n  - ranks: 1\n    speed: 0\n",
       f + ":3: speed = \"0\": out of range; allowed: a number >= 1e-06 and <= 1e+06"},
      {"compute:\n  - ranks: 1\n    speed: 2\n  - ranks: [2, 1]\n    speed: 3\n",
       f + ":4: compute: rank 1 is listed again (first on line 2); allowed: each rank once"},
      {"compute:\n  - ranks: 1\n", f + ":2: compute: an item without 'speed'"},
      {"links:\n  - ranks: 1\n    dim: 1\n    bandwidth: 2\n",
       f + ":3: dim = \"1\": out of range; allowed: an integer >= 0 and <= 0"},
      {"links:\n  - ranks: 1\n    bandwidth: 2\n", f + ":2: links: an item without 'dim'"},
      {"links:\n  - ranks: 1\n    dim: 0\n    speed: 2\n",
       f + ":4: speed: links: unknown key 'speed'; valid keys: ranks, dim, bandwidth"},
      {"compute: 3\n", f + ":1: compute = (not a list): wrong type; allowed: a list of items"},
  };
  for (const Case& c : cases) {
    d.Write("het.yml", c.text);
    EXPECT_EQ(Failure(RunHet(d)), c.message) << c.text;
  }
  // Link factors are the analytical backend's alone.
  d.Write("het.yml", "links:\n  - ranks: 1\n    dim: 0\n    bandwidth: 2\n");
  EXPECT_EQ(Failure(RunHet(d, "congestion-aware")),
            "--heterogeneity = \"" + f +
                "\": 'links' is read by the analytical backend only, and the run uses --network-backend = "
                "congestion-aware; allowed: --network-backend=analytical, or no 'links' in the file");
}

}  // namespace
}  // namespace orrery
