// Memory capacity: the allocation rule, peaks, over-capacity errors and warnings.
#include <gtest/gtest.h>

#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;

constexpr uint64_t kAct = 1ull << 30;

Result<RunReport> RunStep(const TempDir& d, bool offload, const std::string& mem_yaml, bool allow = false) {
  DataParallelSpec spec;
  spec.npus = 8;
  spec.layers = 8;
  spec.fwd_us = 5000;
  spec.bwd_us = 10000;
  spec.allreduce_bytes = 64 << 20;
  spec.activation_bytes = kAct;
  spec.offload = offload;
  EXPECT_TRUE(WriteDataParallelTraces(spec, d.File("trace")).ok());
  d.Write("system.json",
          R"({"preferred-dataset-splits": 4, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"]})");
  d.Write("mem.yml", mem_yaml);
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = "Ring(8,50GB/s,500ns)";
  c.files.system = d.File("system.json");
  c.files.memory_config = d.File("mem.yml");
  c.run.allow_oversubscription = allow;
  return RunSimulation(c, DefaultBackends());
}

TEST(Capacity, ActivationsHeldUntilTheirBackwardOverflow) {
  TempDir d;
  auto r = RunStep(d, false, "backend: astra-sim\nlocal_capacity_bytes: 10e9\nresident_bytes: 2e9\n");
  ASSERT_FALSE(r.ok());
  // 2e9 + 7 activations = 9516192768 in use when fwd_7 (node 7) asks for one more.
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("over capacity: rank 0, node 7 (fwd_7) allocates 1073741824 bytes at t=35000000 ns with "
                   "9516192768 of 10000000000 local bytes in use: short by 589934592 bytes"),
            std::string::npos)
      << m;
}

TEST(Capacity, OversubscriptionIsAWarningWithThePeak) {
  TempDir d;
  auto r = RunStep(d, false, "backend: astra-sim\nlocal_capacity_bytes: 10e9\nresident_bytes: 2e9\n", true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& n : r->per_npu) EXPECT_EQ(n.peak_local_bytes, 2000000000u + 8 * kAct);
  ASSERT_EQ(r->warnings.size(), 8u);  // one per rank
  EXPECT_NE(FormatReportText(r.value()).find("warning: over capacity: rank 0, node 7 (fwd_7)"), std::string::npos);
}

TEST(Capacity, OffloadingToAPoolFits) {
  TempDir d;
  auto r = RunStep(d, true,
                   "backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1600\nsharing: fair\n"
                   "local_capacity_bytes: 10e9\nresident_bytes: 2e9\nremote_capacity_bytes: 1e12\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& n : r->per_npu) {
    EXPECT_LT(n.peak_local_bytes, 2000000000u + 8 * kAct);
    EXPECT_GE(n.peak_local_bytes, 2000000000u + kAct);
    EXPECT_GT(n.remote_mem_ns, 0u);
  }
  EXPECT_EQ(r->peak_remote_bytes, 8 * 8 * kAct);  // every activation of every rank is out at the turn
  EXPECT_TRUE(r->warnings.empty());
}

TEST(Capacity, RemoteTierCapacity) {
  TempDir d;
  auto r = RunStep(d, true,
                   "backend: pool\nbandwidth_gbps: 1600\nsharing: fair\nlocal_capacity_bytes: 10e9\n"
                   "remote_capacity_bytes: 20e9\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("into a remote tier of 20000000000 bytes: short by"), std::string::npos)
      << r.status().message();
}

TEST(Capacity, BadCapacities) {
  struct Bad {
    const char* yaml;
    const char* needle;
  };
  const Bad cases[] = {
      {"backend: pool\nbandwidth_gbps: 50\nlocal_capacity_bytes: 0\n",
       "local_capacity_bytes = 0: a capacity must be positive"},
      {"backend: pool\nbandwidth_gbps: 50\nlocal_capacity_bytes: lots\n",
       "mem.yml:3: local_capacity_bytes = \"lots\": not an integer"},
      {"backend: pool\nbandwidth_gbps: 50\nremote_capacity_bytes: -4\n",
       "mem.yml:3: remote_capacity_bytes = \"-4\": negative"},
  };
  for (const auto& c : cases) {
    TempDir d;
    auto r = RunStep(d, false, c.yaml);
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_NE(r.status().message().find(c.needle), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace orrery
