// Memory backends: the shared pool's closed forms (fair sharing with 1, 2 and
// N concurrent accesses, several FIFO ports) and its configuration errors.
#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/et_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

// Rank r loads sizes[r] bytes at t=0 (ranks beyond sizes do nothing).
void WriteLoads(const TempDir& d, int npus, const std::vector<uint64_t>& sizes) {
  testing::WriteTraces(d, npus, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (r < static_cast<int>(sizes.size())) {
      nodes.push_back(testing::MakeNode(1, ChakraProtoMsg::MEM_LOAD_NODE));
      testing::SetAttr(&nodes.back(), "tensor_size", sizes[r]);
    }
    return nodes;
  });
}

Result<RunReport> RunMem(const TempDir& d, const std::string& mem_yaml) {
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("mem.yml", mem_yaml);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  return RunSimulation(c, DefaultBackends());
}

TEST(PoolMemory, FairSharingWithOneTwoAndNAccesses) {
  const uint64_t b = 1000000;  // 20000 ns alone at 50 GB/s (10^9 B/s)
  for (int n : {1, 2, 8}) {
    TempDir d;
    WriteLoads(d, 8, std::vector<uint64_t>(n, b));
    auto r = RunMem(d, "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\nsharing: fair\n");
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (int k = 0; k < n; ++k) EXPECT_EQ(r->per_npu[k].finished_ns, 500 + n * 20000u) << n << " accesses, rank " << k;
    EXPECT_EQ(r->memory_accesses, static_cast<uint64_t>(n));
  }
}

TEST(PoolMemory, FairSharingWithUnequalAccesses) {
  TempDir d;
  WriteLoads(d, 8, {1000000, 3000000});
  auto r = RunMem(d, "backend: pool\nlatency_ns: 100\nbandwidth_gbps: 50\nsharing: fair\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Both at 25 B/ns until the small one is done (1e6 / 25 = 40000 ns), then the large alone at 50 B/ns.
  EXPECT_EQ(r->per_npu[0].finished_ns, 100 + 40000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, 100 + 40000u + 2000000 / 50);
}

TEST(PoolMemory, SeveralFifoPorts) {
  TempDir d;
  WriteLoads(d, 8, {1000000, 1000000, 1000000, 1000000, 1000000});
  auto r = RunMem(d, "backend: pool\nlatency_ns: 500\nbandwidth_gbps: 50\nports: 2\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tick one = 500 + 20000;
  // Requests queue in rank order; each takes the port that frees first.
  EXPECT_EQ(r->per_npu[0].finished_ns, one);
  EXPECT_EQ(r->per_npu[1].finished_ns, one);
  EXPECT_EQ(r->per_npu[2].finished_ns, 2 * one);
  EXPECT_EQ(r->per_npu[3].finished_ns, 2 * one);
  EXPECT_EQ(r->per_npu[4].finished_ns, 3 * one);
  EXPECT_EQ(r->memory_wait_ns, 2 * one + 2 * one + 0u);  // ranks 2,3 wait one, rank 4 waits two
}

TEST(PoolMemory, ConfigurationErrors) {
  struct Bad {
    const char* yaml;
    const char* needle;
  };
  const Bad cases[] = {
      {"backend: pool\nbandwidth_gbps: 50\nlatnecy_ns: 5\n", "unknown key 'latnecy_ns' for the pool backend"},
      {"backend: pool\nbandwidth_gbps: -5\n",
       "mem.yml:2: bandwidth_gbps = \"-5\": out of range; allowed: a number >= 0.001 and <= 1e+09"},
      {"backend: pool\nbandwidth_gbps: 0\n",
       "mem.yml:2: bandwidth_gbps = \"0\": out of range; allowed: a number >= 0.001"},
      {"backend: pool\nbandwidth_gbps: 50\nsharing: fairest\n",
       "mem.yml:3: sharing = \"fairest\": unknown sharing; allowed: fifo, fair"},
      {"backend: pool\nbandwidth_gbps: 50\nports: 0\n",
       "mem.yml:3: ports = \"0\": out of range; allowed: an integer >= 1 and <= 65536"},
      {"backend: hbm9000\n", "backend = \"hbm9000\": unknown memory backend; valid: astra-sim, pool"},
      {"backend: pool\nbandwidth_gbps: [1, 2]\n",
       "mem.yml:2: bandwidth_gbps = [1, 2]: expected a single value, found a list"},
  };
  for (const auto& c : cases) {
    TempDir d;
    WriteLoads(d, 8, {1000});
    auto r = RunMem(d, c.yaml);
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("mem.yml"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(LocalTier, MemNodesMarkedLocalUseHbm) {
  testing::TempDir d;
  testing::WriteTraces(d, 2, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t id = 1; id <= 2; ++id) {
      auto n = testing::MakeNode(id, id == 1 ? ChakraProtoMsg::MEM_LOAD_NODE : ChakraProtoMsg::MEM_STORE_NODE);
      testing::SetAttr(&n, "tensor_size", uint64_t{1600000});
      testing::SetAttr(&n, "memory_tier", std::string(r == 0 ? "local" : "remote"));
      nodes.push_back(n);
    }
    return nodes;
  });
  d.Write("network.yml", testing::NetworkYaml("Ring", 2, 50, 500));
  d.Write("system.json", R"({"preferred-dataset-splits": 1, "local-mem-bw": 1600})");
  d.Write("mem.yml", "backend: pool\nlatency_ns: 700\nbandwidth_gbps: 50\nlocal_latency_ns: 100\n");
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  auto r = RunSimulation(c, DefaultBackends());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 2 * (100 + 1600000 / 1600u));  // HBM: 1000 ns + latency, twice
  EXPECT_EQ(r->per_npu[1].finished_ns, 2 * (700 + 1600000 / 50u));    // the pool
  EXPECT_EQ(r->memory_accesses, 2u);                                  // only rank 1's went to the pool
  // A local-tier node needs local-mem-bw; a wrong tier name is refused.
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  auto no_bw = RunSimulation(c, DefaultBackends());
  ASSERT_FALSE(no_bw.ok());
  EXPECT_NE(no_bw.status().message().find(
                "accesses the local tier but the system configuration has no \"local-mem-bw\""),
            std::string::npos)
      << no_bw.status().message();
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Rank `who` stores or loads `bytes`; optionally rank 2 also sends `p2p` bytes to rank 0.
void WritePoolTraffic(const testing::TempDir& d, int who, bool store, uint64_t bytes, uint64_t p2p) {
  testing::WriteTraces(d, 4, [&](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (r == who) {
      nodes.push_back(testing::MakeNode(1, store ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE));
      testing::SetAttr(&nodes.back(), "tensor_size", bytes);
    }
    if (p2p && (r == 2 || r == 0)) {
      nodes.push_back(testing::MakeNode(2, r == 2 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE));
      testing::SetAttr(&nodes.back(), r == 2 ? "comm_dst" : "comm_src", uint64_t{r == 2 ? 0u : 2u});
      testing::SetAttr(&nodes.back(), "comm_size", p2p);
    }
    return nodes;
  });
}

Result<RunReport> RunPool(const testing::TempDir& d, const std::string& backend, const std::string& via) {
  d.Write("system.json", R"({"preferred-dataset-splits": 1})");
  d.Write("mem.yml", "backend: pool\nlatency_ns: 700\nbandwidth_gbps: 50\n" + via);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(4,50GB/s,500ns)";
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  c.run.backend = backend;
  return RunSimulation(c, DefaultBackends());
}

TEST(PoolOverNetwork, StoresAndLoadsCrossTheDimension) {
  const uint64_t b = 1000000;
  const double x = b / GiBpsToBytesPerNs(50);
  const Tick pool = 700 + b / 50;
  struct Case {
    int who;
    bool store;
    Tick want;
  };
  const Case cases[] = {
      {2, true, static_cast<Tick>(2 * 500 + x) + pool},  // 2 -> 0 (two hops), then the pool
      {3, false, pool + static_cast<Tick>(500 + x)},     // the pool, then 0 -> 3
      {0, true, pool},                                   // the pool hangs off rank 0
  };
  for (const auto& c : cases) {
    testing::TempDir d;
    WritePoolTraffic(d, c.who, c.store, b, 0);
    auto r = RunPool(d, "analytical", "via_network_dim: 0\n");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->per_npu[c.who].finished_ns, c.want) << "rank " << c.who;
    auto direct = RunPool(d, "analytical", "");
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(direct->per_npu[c.who].finished_ns, pool);
  }
}

TEST(PoolOverNetwork, PoolTrafficContendsWithOtherMessages) {
  // Rank 2 -> 0 goes 2 -> 3 -> 0; rank 3's store to the pool on rank 0 uses 3 -> 0 too.
  testing::TempDir alone, both;
  WritePoolTraffic(alone, -1, true, 0, 4 << 20);
  WritePoolTraffic(both, 3, true, 16 << 20, 4 << 20);
  auto a = RunPool(alone, "congestion-aware", "via_network_dim: 0\n");
  auto b = RunPool(both, "congestion-aware", "via_network_dim: 0\n");
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().message();
  EXPECT_GT(b->per_npu[0].finished_ns, a->per_npu[0].finished_ns);
  testing::TempDir bad;
  WritePoolTraffic(bad, 3, true, 1000, 0);
  auto r = RunPool(bad, "analytical", "via_network_dim: 3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("via_network_dim = 3: must name a network dimension, 0..0"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// ASTRA-sim's remote memory: latency + floor(bytes / bw) per access; per-NPU
// never contends, per-node is a FIFO per node, the pool a FIFO for everyone.
TEST(AstraSimMemory, ClosedFormsOfTheThreeModes) {
  const uint64_t b = 1048576;
  const Tick svc = 500 + b / 50;  // 21471
  struct Case {
    const char* json;
    std::vector<Tick> want;
  };
  const Case cases[] = {
      {R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 500, "remote-mem-bw": 50})",
       {svc, svc, svc, svc}},
      {R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "num-nodes": 2, "num-npus-per-node": 2,
           "remote-mem-latency": 500, "remote-mem-bw": 50})",
       {svc, 2 * svc, svc, 2 * svc}},
      {R"({"memory-type": "MEMORY_POOL", "remote-mem-latency": 500, "remote-mem-bw": 50})",
       {svc, 2 * svc, 3 * svc, 4 * svc}},
  };
  for (const auto& c : cases) {
    testing::TempDir d;
    WriteLoads(d, 4, {b, b, b, b});
    d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
    d.Write("system.json", R"({"preferred-dataset-splits": 1})");
    d.Write("mem.json", c.json);
    RunConfig cfg;
    cfg.files.workload_prefix = d.File("trace");
    cfg.files.network = d.File("network.yml");
    cfg.files.system = d.File("system.json");
    cfg.files.remote_memory = d.File("mem.json");
    auto r = RunSimulation(cfg, DefaultBackends());
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (int k = 0; k < 4; ++k) EXPECT_EQ(r->per_npu[k].finished_ns, c.want[k]) << c.json << " rank " << k;
  }
}

}  // namespace
}  // namespace orrery
