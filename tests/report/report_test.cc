// The report: deterministic, and the four categories of each NPU's time
// (compute, exposed communication, memory stall, idle) sum to its finished time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "run/examples.h"
#include "run/run.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

TEST(Report, SameInputsGiveByteIdenticalReports) {
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("data-parallel", d.path(), &c).ok());
  c.run.backend = "congestion-aware";
  auto a = RunSimulation(c, DefaultBackends());
  auto b = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(FormatReportJson(a.value()), FormatReportJson(b.value()));
  EXPECT_EQ(FormatReportText(a.value()), FormatReportText(b.value()));
}

TEST(Report, ComputeOverlapsCommunication) {
  // Data-parallel loop: backward compute overlaps the previous layer's all-reduce,
  // so exposed communication is less than total communication.
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("data-parallel", d.path(), &c).ok());
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& n = r->per_npu[0];
  EXPECT_EQ(n.compute_ns, 4 * 500000u + 4 * 1000000u);
  // Always computing or communicating: exposed communication is the rest.
  EXPECT_EQ(n.exposed_comm_ns, n.finished_ns - n.compute_ns);
  EXPECT_EQ(n.mem_stall_ns, 0u);
  EXPECT_EQ(n.idle_ns, 0u);
  EXPECT_LT(n.exposed_comm_ns, n.comm_ns);
  EXPECT_EQ(r->collectives.size(), 4u);
  const std::string json = FormatReportJson(r.value());
  EXPECT_NE(json.find("\"exposed_comm_ns\""), std::string::npos);
}

TEST(Report, IterationsRepeatTheGraph) {
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("default", d.path(), &c).ok());
  auto one = RunSimulation(c, DefaultBackends());
  c.run.iterations = 3;
  auto three = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(three->per_npu[0].finished_ns, 3 * one->per_npu[0].finished_ns);
}

Tick Sum(const NpuReport& n) {
  return n.compute_ns + n.exposed_comm_ns + n.mem_stall_ns + n.peer_wait_ns + n.cpu_ns + n.idle_ns;
}

// Per rank: 1 COMP 10 us; 2 MEM_LOAD 1e6 B after 1; 3 COMP 5 us and 4 MEM_STORE
// 1e6 B after 2 (in parallel); 5 ALL_REDUCE 1 KiB after 3 and 4; 6 a CPU op of 2 us after 5.
// Remote memory per NPU: 1000 ns + 1e6 B / (100 GB/s = 100 B/ns) = 11000 ns per access.
//   [0, 10000)        compute (node 1)
//   [10000, 21000)    memory stall (node 2 alone)
//   [21000, 26000)    compute (node 3, node 4's store overlaps it: not a stall)
//   [26000, 32000)    memory stall (node 4 alone)
//   [32000, 32000+C)  exposed communication (node 5 alone, C = its comm time)
//   then 2000 ns      idle (a CPU op: neither GPU compute, communication nor memory)
TEST(Report, MemoryStallIsItsOwnCategory) {
  testing::TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("memory.json",
          R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 1000, "remote-mem-bw": 100})");
  testing::WriteTraces(d, 2, [](int) {
    auto comp = [](uint64_t id, uint64_t us) {
      auto n = testing::MakeNode(id, ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(us);
      return n;
    };
    auto mem = [](uint64_t id, ChakraProtoMsg::NodeType t) {
      auto n = testing::MakeNode(id, t);
      testing::SetAttr(&n, "tensor_size", uint64_t{1000000});
      return n;
    };
    std::vector<ChakraProtoMsg::Node> v = {comp(1, 10),
                                           mem(2, ChakraProtoMsg::MEM_LOAD_NODE),
                                           comp(3, 5),
                                           mem(4, ChakraProtoMsg::MEM_STORE_NODE),
                                           testing::CollNode(5, 0, 1024),
                                           comp(6, 2)};
    v[1].add_data_deps(1);
    v[2].add_data_deps(2);
    v[3].add_data_deps(2);
    v[4].add_data_deps(3);
    v[4].add_data_deps(4);
    v[5].add_data_deps(5);
    testing::SetAttr(&v[5], "is_cpu_op", uint64_t{1});
    return v;
  });
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.remote_memory = d.File("memory.json");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& n : r->per_npu) {
    EXPECT_EQ(n.compute_ns, 15000u);
    EXPECT_EQ(n.remote_mem_ns, 22000u);
    EXPECT_EQ(n.mem_stall_ns, 11000u + 6000u);
    EXPECT_GT(n.comm_ns, 0u);
    EXPECT_EQ(n.exposed_comm_ns, n.comm_ns);  // the all-reduce overlaps nothing
    EXPECT_EQ(n.cpu_ns, 2000u);               // the CPU op at the end: not idle
    EXPECT_EQ(n.idle_ns, 0u);
    EXPECT_EQ(n.finished_ns, 32000u + n.comm_ns + 2000u);
    EXPECT_EQ(Sum(n), n.finished_ns);
  }
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("bottleneck: memory (of the slowest NPU's time: compute "), std::string::npos) << text;
  EXPECT_NE(text.find("  exposed_comm     mem_stall     peer_wait           cpu          idle\n"), std::string::npos)
      << text;
  // mem_stall, peer_wait, cpu and idle columns
  EXPECT_NE(text.find("         17000             0          2000             0\n"), std::string::npos) << text;
  EXPECT_NE(FormatReportJson(r.value()).find("\"mem_stall_ns\": 17000"), std::string::npos);
  // remote_mem_ns, mem_stall_ns, peer_wait_ns, cpu_ns
  EXPECT_NE(FormatReportCsv(r.value()).find(",22000,17000,0,2000\n"), std::string::npos);
}

// On every conformance case: the categories sum to the finished time, and where
// no MEM node runs, exposed communication and peer wait together are ASTRA-sim's
// exposed communication (expected.tsv), which counts a posted receive as communication.
TEST(Report, CategoriesSumToFinishedOnConformanceCases) {
  const std::string conf = std::string(ORRERY_SHARED_DIR) + "/conformance/astra-sim";
  if (access((conf + "/expected.tsv").c_str(), R_OK) != 0) GTEST_SKIP() << "no conformance data at " << conf;
  std::ifstream in(conf + "/expected.tsv");
  std::string line;
  std::getline(in, line);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(conf.c_str()), 0);
  int checked = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, '\t')) c.push_back(x);
    if (c[0].find("custom") != std::string::npos) continue;
    RunConfig cfg;
    cfg.run.backend = c[1];
    cfg.files.workload_prefix = c[2];
    cfg.files.network = c[3];
    cfg.files.system = c[4];
    cfg.files.remote_memory = c[5];
    auto r = RunSimulation(cfg, DefaultBackends());
    ASSERT_TRUE(r.ok()) << c[0] << ": " << r.status().message();
    for (const auto& n : r->per_npu) {
      EXPECT_EQ(Sum(n), n.finished_ns) << c[0] << " rank " << n.rank;
      if (c[0].rfind("mem_", 0) != 0 && c.size() > 7 && !c[7].empty()) {
        // One value for every rank, or one per rank separated by commas.
        std::vector<std::string> per_rank;
        std::stringstream vs(c[7]);
        for (std::string v; std::getline(vs, v, ',');) per_rank.push_back(v);
        const std::string& expect = per_rank.size() == 1 ? per_rank[0] : per_rank.at(n.rank);
        EXPECT_EQ(std::to_string(n.exposed_comm_ns + n.peer_wait_ns), expect) << c[0] << " rank " << n.rank;
      }
    }
    ++checked;
  }
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_GT(checked, 40);
}

TEST(Report, LinkStatsWithoutLinksSaySo) {
  testing::TempDir d;
  RunConfig c;
  ASSERT_TRUE(WriteExample("default", d.path(), &c).ok());
  c.observe.link_stats = true;
  auto r = RunSimulation(c, DefaultBackends());  // analytical: no per-link statistics
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->links.empty());
  const std::string text = FormatReportText(r.value());
  EXPECT_NE(text.find("\nlink statistics: none (backend analytical has no per-link statistics)\n"), std::string::npos)
      << text;
  EXPECT_NE(FormatReportJson(r.value()).find(
                "\"links_note\": \"none (backend analytical has no per-link statistics)\""),
            std::string::npos);
  c.run.backend = "congestion-aware";
  auto ca = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(ca->links.empty());
  EXPECT_EQ(FormatReportText(ca.value()).find("link statistics: none"), std::string::npos);
  c.observe.link_stats = false;
  auto off = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(FormatReportText(off.value()).find("link statistics"), std::string::npos);
}

// The JSON report writes its per-rank arrays as text, not as a tree; the text
// must be what nlohmann's dump(1) of the whole tree gives (the same layout,
// escaping and field order), with and without the optional fields.
TEST(Report, JsonArraysWrittenAsTextEqualTheTreeDump) {
  RunReport r;
  r.backend = "analytical";
  r.npus = 2;
  r.symmetry_note = "off";
  r.config_json = R"({"npus": [1, 2], "name": "npus"})";  // a nested "npus" key must not be taken for the array
  for (bool capacity : {false, true}) {
    for (bool empty_collectives : {false, true}) {
      r.capacity_tracked = capacity;
      r.per_npu.clear();
      r.collectives.clear();
      for (int i = 0; i < 3; ++i) {
        NpuReport n;
        n.rank = i;
        n.finished_ns = 18446744073709551615ull - static_cast<uint64_t>(i);  // 2^64 - 1 - i: every digit
        n.compute_ns = 7;
        n.peak_local_bytes = 1ull << 40;
        r.per_npu.push_back(n);
        if (empty_collectives) continue;
        CollectiveReport c;
        c.rank = i;
        c.node_id = 42;
        c.name = "all\"reduce\n\u00e9\x01";  // quote, newline, UTF-8 and a control character
        c.type = "ALL_REDUCE";
        c.bytes = 1048576;
        c.algorithm = "ring";
        c.start_ns = 1;
        c.end_ns = 2;
        r.collectives.push_back(c);
      }
      // The tree the report used to build, dumped as a whole.
      nlohmann::ordered_json want = nlohmann::ordered_json::parse(FormatReportJson(r));
      auto& npus = want["npus"] = nlohmann::ordered_json::array();
      for (const NpuReport& n : r.per_npu) {
        npus.push_back({{"rank", n.rank},
                        {"finished_ns", n.finished_ns},
                        {"compute_ns", n.compute_ns},
                        {"comm_ns", n.comm_ns},
                        {"exposed_comm_ns", n.exposed_comm_ns},
                        {"mem_stall_ns", n.mem_stall_ns},
                        {"peer_wait_ns", n.peer_wait_ns},
                        {"remote_mem_ns", n.remote_mem_ns},
                        {"idle_ns", n.idle_ns}});
        if (capacity) npus.back()["peak_local_bytes"] = n.peak_local_bytes;
      }
      auto& colls = want["collectives"] = nlohmann::ordered_json::array();
      for (const CollectiveReport& c : r.collectives) {
        colls.push_back({{"rank", c.rank},
                         {"node_id", c.node_id},
                         {"name", c.name},
                         {"type", c.type},
                         {"bytes", c.bytes},
                         {"algorithm", c.algorithm},
                         {"start_ns", c.start_ns},
                         {"end_ns", c.end_ns}});
      }
      EXPECT_EQ(FormatReportJson(r), want.dump(1) + "\n")
          << "capacity " << capacity << ", no collectives " << empty_collectives;
      EXPECT_NE(FormatReportJson(r).find(empty_collectives ? "\"collectives\": []" : "\"name\": \"all\\\"reduce\\n"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace orrery
