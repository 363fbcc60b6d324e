// The engine on hostile shapes: non-member groups, long instant chains, wide
// fan-out, time past 2^64 ns, many chunks, huge networks, early errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/event_queue.h"
#include "run/run_budget.h"
#include "tests/test_util.h"
#include "workload/executor.h"

namespace orrery {
namespace {

using testing::MakeNode;
using testing::SetAttr;
using testing::TempDir;

constexpr uint64_t kTwo64 = ~uint64_t{0};  // 2^64 - 1

ChakraProtoMsg::Node Comp(uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}) {
  auto n = MakeNode(id, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

void WriteConfigs(const TempDir& d, int npus, const std::string& extra_system = "") {
  d.Write("network.yml", testing::NetworkYaml("Ring", npus, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600, 1, extra_system));
}

bool Has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// --- 1. A collective on a group the rank is not a member of ------------------

TEST(EngineRobustness, CollectiveOnAGroupTheRankIsNotInIsAnError) {
  TempDir d;
  WriteConfigs(d, 4);
  d.Write("groups.json", R"({"tp": [0, 1]})");
  testing::WriteTraces(d, 4, [](int r) {
    auto n = testing::CollNode(7, 0, 1 << 20);
    SetAttr(&n, "pg_name", std::string("tp"));
    return std::vector<ChakraProtoMsg::Node>{n};  // ranks 2 and 3 are not in "tp"
  });
  auto r = testing::RunInWithGroups(d);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_TRUE(Has(m, "trace.2.et: node 7 (rank 2)")) << m;
  EXPECT_TRUE(Has(m, "communicator group \"tp\"")) << m;
  EXPECT_TRUE(Has(m, "rank 2 is not a member of it (members: 0, 1)")) << m;

  std::string err;
  EXPECT_EQ(testing::RunCli("run --workload-configuration=" + d.File("trace") + " --system-configuration=" +
                                d.File("system.json") + " --network-configuration=" + d.File("network.yml") +
                                " --comm-group-configuration=" + d.File("groups.json"),
                            &err),
            2)
      << err;
  EXPECT_TRUE(Has(err, "not a member")) << err;
}

// Found by fuzzing comm_group_json: a group whose name says "does not exist"
// turned the message naming the unknown pg_name into "trace file for rank 0
// does not exist", although every trace file was there.
TEST(EngineRobustness, AnErrorQuotingDoesNotExistIsNotAMissingTrace) {
  TempDir d;
  WriteConfigs(d, 4);
  d.Write("groups.json", R"({"x does not exist": [0, 1, 2, 3]})");
  testing::WriteTraces(d, 4, [](int) {
    auto n = testing::CollNode(7, 0, 1 << 20);
    SetAttr(&n, "pg_name", std::string("0"));
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto r = testing::RunInWithGroups(d);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_TRUE(Has(m, "trace.0.et: node 7 (rank 0): pg_name \"0\" is not in the communicator group configuration")) << m;
  EXPECT_TRUE(Has(m, "\"x does not exist\"")) << m;
  EXPECT_FALSE(Has(m, "trace file for rank")) << m;
}

TEST(EngineRobustness, NonMemberMessageAbbreviatesALargeGroup) {
  TempDir d;
  WriteConfigs(d, 16);
  d.Write("groups.json", R"({"big": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]})");
  testing::WriteTraces(d, 16, [](int r) {
    auto n = testing::CollNode(3, 0, 1 << 20);
    SetAttr(&n, "pg_name", std::string("big"));
    return std::vector<ChakraProtoMsg::Node>{n};
  });
  auto r = testing::RunInWithGroups(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      Has(r.status().message(), "rank 15 is not a member of it (members: 0, 1, 2, 3, 4, 5, 6, 7, ... (15 ranks))"))
      << r.status().message();
}

TEST(EngineRobustness, MessageOf2To63BytesOrMoreIsAnError) {
  // The trace loader refuses it (sizes are at most 2^48 bytes) before the
  // system layer, which keeps sizes shifted by one bit, could see it.
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [](int) {
    return std::vector<ChakraProtoMsg::Node>{testing::CollNode(5, 0, uint64_t{1} << 63)};
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(),
                  "trace.0.et: node 5 (rank 0): comm_size = 9223372036854775808: out of range; "
                  "allowed: an integer >= 0 and <= 281474976710656"))
      << r.status().message();
}

// --- 2. A long chain of instant nodes ----------------------------------------

TEST(EngineRobustness, MillionNodeInstantChainFinishes) {
  // COMP 3 us -> 1,000,000 METADATA nodes in a chain -> COMP 2 us: 5000 ns.
  constexpr uint64_t kChain = 1000000;
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [&](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    nodes.reserve(kChain + 2);
    nodes.push_back(Comp(0, 3));
    for (uint64_t i = 1; i <= kChain; ++i) {
      auto n = MakeNode(i, i % 2 ? ChakraProtoMsg::METADATA_NODE : ChakraProtoMsg::INVALID_NODE);
      n.add_data_deps(i - 1);
      nodes.push_back(n);
    }
    nodes.push_back(Comp(kChain + 1, 2, {kChain}));
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(testing::MaxFinished(*r), 5000u);
  EXPECT_EQ(r->per_npu[1].finished_ns, 5000u);
}

TEST(EngineRobustness, ZeroSizeRooflineChainFinishes) {
  // 300,000 roofline GPU COMP nodes with tensor_size 0 (no work) in a chain, then one real
  // node: each empty node is instant, so the finish is the real node's end, and the busy
  // time stays consistent (idle = finish - busy = 0).
  constexpr uint64_t kChain = 300000;
  TempDir d;
  WriteConfigs(d, 2, ", \"roofline-enabled\": 1, \"peak-perf\": 100");
  testing::WriteTraces(d, 2, [&](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < kChain; ++i) {
      auto n = MakeNode(i, ChakraProtoMsg::COMP_NODE);
      SetAttr(&n, "num_ops", uint64_t{1000});
      SetAttr(&n, "tensor_size", uint64_t{0});
      if (i > 0) n.add_data_deps(i - 1);
      nodes.push_back(n);
    }
    // A real node: 1e9 ops at min(100 TFLOPS, 1600e9 B/s * 1e9/1e6 ops/B) = 1e14 flop/s: 1e9 / 1e14 s = 10,000 ns.
    auto last = MakeNode(kChain, ChakraProtoMsg::COMP_NODE);
    SetAttr(&last, "num_ops", uint64_t{1000000000});
    SetAttr(&last, "tensor_size", uint64_t{1000000});
    last.add_data_deps(kChain - 1);
    nodes.push_back(last);
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 10000u);
  EXPECT_EQ(r->per_npu[0].compute_ns, 10000u);
  EXPECT_EQ(r->per_npu[0].idle_ns, 0u);
}

// --- 4. Wide fan-out ------------------------------------------------------------

TEST(EngineRobustness, HundredThousandReadyNodesRun) {
  // One 1 us root, then 100,000 independent 1 us GPU nodes that share one GPU:
  // they run back to back, (1 + 100,000) us.
  constexpr uint64_t kWide = 100000;
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [&](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    nodes.push_back(Comp(0, 1));
    for (uint64_t i = 1; i <= kWide; ++i) nodes.push_back(Comp(i, 1, {0}));
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(testing::MaxFinished(*r), (kWide + 1) * 1000);
}

TEST(EngineRobustness, InstantNodesBetweenBusyNodes) {
  // 0 METADATA -> {1: COMP 5 us, 2: METADATA -> 4: METADATA -> 5: COMP 2 us}, 1 -> 3: COMP 1 us -> 6: METADATA.
  // 0, 2 and 4 complete at t=0 while 1 holds the GPU; 3 and 5 then share it:
  // 5 + 1 + 2 us of compute back to back, 8000 ns.
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [&](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    nodes.push_back(MakeNode(0, ChakraProtoMsg::METADATA_NODE));
    nodes.push_back(Comp(1, 5, {0}));
    auto m2 = MakeNode(2, ChakraProtoMsg::METADATA_NODE);
    m2.add_data_deps(0);
    nodes.push_back(m2);
    nodes.push_back(Comp(3, 1, {1}));
    auto m4 = MakeNode(4, ChakraProtoMsg::METADATA_NODE);
    m4.add_data_deps(2);
    nodes.push_back(m4);
    nodes.push_back(Comp(5, 2, {4}));
    auto tail = MakeNode(6, ChakraProtoMsg::METADATA_NODE);
    tail.add_data_deps(3);
    nodes.push_back(tail);
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->per_npu[0].finished_ns, 8000u);
  EXPECT_EQ(r->per_npu[0].compute_ns, 8000u);
}

// --- 3. Simulated time past 2^64 ns ------------------------------------------------

TEST(EngineRobustness, TickArithmeticSaturates) {
  EXPECT_EQ(SatAdd(kTwo64 - 5, 5), kTwo64);
  EXPECT_EQ(SatAdd(kTwo64 - 5, 6), kTickMax);
  EXPECT_EQ(SatAdd(1, 2), 3u);
  EXPECT_EQ(SatMul(uint64_t{1} << 32, uint64_t{1} << 32), kTickMax);
  EXPECT_EQ(SatMul(uint64_t{1} << 31, uint64_t{1} << 32), uint64_t{1} << 63);
  EXPECT_EQ(TicksFromDouble(2.9), 2u);
  EXPECT_EQ(TicksFromDouble(1e300), kTickMax);
  EXPECT_EQ(TicksFromDouble(std::nan("")), kTickMax);
  EXPECT_EQ(TicksFromDouble(std::ldexp(1.0, 64)), kTickMax);
  EXPECT_EQ(TicksFromDouble(std::ldexp(1.0, 63)), uint64_t{1} << 63);
  EXPECT_EQ(TicksFromDouble(-3), 0u);
}

struct Count : EventHandler {
  int n = 0;
  void HandleEvent(uint32_t, uint64_t) override { ++n; }
};

TEST(EngineRobustness, EventQueueRefusesTimePast2To64) {
  EventQueue q;
  Count c;
  q.ScheduleAt(uint64_t{1} << 63, &c, 1);
  q.Run();
  EXPECT_EQ(q.Now(), uint64_t{1} << 63);
  EXPECT_FALSE(q.overflowed());
  q.ScheduleAfter(uint64_t{1} << 63, &c, 1);  // 2^64: not representable
  EXPECT_TRUE(q.overflowed());
  EXPECT_EQ(q.overflow_delay(), uint64_t{1} << 63);
  EXPECT_EQ(q.overflow_at(), uint64_t{1} << 63);
  EXPECT_TRUE(q.Empty());  // nothing was scheduled
  q.Run();
  EXPECT_EQ(c.n, 1);
}

TEST(EngineRobustness, ComputeDurationPast2To64IsAnError) {
  // One node cannot overflow (durations are at most 10^12 us = 10^15 ns), but
  // a chain can: node i ends at (i + 1) * 10^15 ns, and 18447 * 10^15 > 2^64 - 1
  // (= 18446744073709551615), so node 18446, starting at 18446 * 10^15 ns, overflows.
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < 18447; ++i)
      nodes.push_back(i == 0 ? Comp(i, 1000000000000) : Comp(i, 1000000000000, {i - 1}));
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(), "simulated time would exceed 2^64 ns at rank 0 node 18446 (COMP duration "))
      << r.status().message();
  EXPECT_TRUE(Has(r.status().message(), "at t=18446000000000000000 ns)")) << r.status().message();

  std::string err;
  EXPECT_EQ(testing::RunCli("run --workload-configuration=" + d.File("trace") + " --system-configuration=" +
                                d.File("system.json") + " --network-configuration=" + d.File("network.yml"),
                            &err),
            2)
      << err;
  EXPECT_TRUE(Has(err, "2^64 ns")) << err;
}

TEST(EngineRobustness, ADurationBeyondTheTraceLimitIsRefusedAtLoad) {
  // 2^64 ns = 18,446,744,073,709,551.616 us: such a node is refused by the loader.
  TempDir d;
  WriteConfigs(d, 2);
  testing::WriteTraces(d, 2, [](int) { return std::vector<ChakraProtoMsg::Node>{Comp(7, 18446744073709552)}; });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(), "node 7 (rank 0): duration_micros = 18446744073709552: out of range"))
      << r.status().message();
}

TEST(EngineRobustness, RooflineDurationPast2To64IsAnError) {
  // 10^18 ops at the slowest allowed peak, 0.001 TFLOPS = 10^9 flop/s: 10^9 s =
  // 10^18 ns per node. Chained, node 18 starts at 1.8e19 ns and would end at
  // 1.9e19 > 2^64 - 1.
  TempDir d;
  WriteConfigs(d, 2, ", \"roofline-enabled\": 1, \"peak-perf\": 0.001");
  testing::WriteTraces(d, 2, [](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < 19; ++i) {
      auto n = MakeNode(i, ChakraProtoMsg::COMP_NODE);
      SetAttr(&n, "num_ops", uint64_t{1000000000000000000});
      SetAttr(&n, "tensor_size", uint64_t{1});
      if (i > 0) n.add_data_deps(i - 1);
      nodes.push_back(n);
    }
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(), "at rank 0 node 18 (roofline COMP duration ")) << r.status().message();
}

TEST(EngineRobustness, NetworkDelaysPast2To64AreAnError) {
  // Ring all-reduce of 2^48 bytes (the largest a trace may carry) on 4 NPUs at
  // the slowest allowed 0.001 GB/s (0.001 * 2^30 / 1e9 B/ns): 6 steps of 2^46
  // bytes, about 6.6e16 ns each, 3.9e17 ns per all-reduce. 100 of them in a
  // chain need about 3.9e19 ns > 2^64.
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 4, 0.001, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600, 1));
  testing::WriteTraces(d, 4, [](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < 100; ++i) {
      auto n = testing::CollNode(i, 0, uint64_t{1} << 48);
      if (i > 0) n.add_data_deps(i - 1);
      nodes.push_back(n);
    }
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_TRUE(Has(m, "simulated time would exceed 2^64 ns at rank 0 node ")) << m;
  EXPECT_TRUE(Has(m, "COMM_COLL_NODE in flight; a network or memory delay of ")) << m;
}

// --- 5. Many chunks --------------------------------------------------------------

TEST(EngineRobustness, ManyChunksTakeChunkCountTimesOneChunk) {
  // With one active chunk per dimension the chunks of one collective run one
  // after another, each exactly like a collective of the chunk's size alone.
  constexpr int kSplits = 4096;  // the most preferred-dataset-splits allows
  constexpr uint64_t kChunk = 64;
  auto run = [&](int splits, uint64_t bytes) {
    TempDir d;
    d.Write("network.yml", testing::NetworkYaml("Ring", 4, 50, 500));
    d.Write("system.json", testing::SystemJson("ring", splits, 10, 1600, 1));
    testing::WriteTraces(d, 4, [&](int) { return std::vector<ChakraProtoMsg::Node>{testing::CollNode(0, 0, bytes)}; });
    auto r = testing::RunIn(d);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? testing::MaxFinished(*r) : 0;
  };
  const Tick one = run(1, kChunk);
  ASSERT_GT(one, 0u);
  EXPECT_EQ(run(kSplits, kChunk * kSplits), one * kSplits);
}

// --- 6. Huge networks: cheap checks first, memory estimated --------------------

TEST(EngineRobustness, HugeNetworkChecksTracesBeforeBuildingState) {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 1 << 26, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 1, 10, 1600));
  testing::WriteTraces(d, 1, [](int) { return std::vector<ChakraProtoMsg::Node>{Comp(0, 1)}; });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(), "trace.1.et: trace file for rank 1 does not exist")) << r.status().message();
  EXPECT_TRUE(Has(r.status().message(), "67108864 NPUs")) << r.status().message();
}

TEST(EngineRobustness, MemoryEstimateRefusesWhatDoesNotFit) {
  // 2^26 NPUs, all simulated, no trace bytes: 2^26 * (256 + 4096) bytes = 272.0 GiB.
  const uint64_t n = uint64_t{1} << 26;
  const uint64_t est = EstimateRunBytes(n, n, 0);
  EXPECT_EQ(est, n * 4352);
  const uint64_t phys = uint64_t{8} << 30;
  Status st = CheckRunFitsInMemory(est, phys, "net.yml", n);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Has(st.message(), "the network (net.yml) has 67108864 NPUs")) << st.message();
  EXPECT_TRUE(Has(st.message(), "an estimated 272.0 GiB (292057776128 bytes")) << st.message();
  EXPECT_TRUE(Has(st.message(), "physical memory of 8.0 GiB")) << st.message();
  // One simulated rank (identical traces) fits: 2^26 * 256 + 4096 bytes = 16 GiB + 4 KiB > 8 GiB, < 32 GiB.
  EXPECT_TRUE(CheckRunFitsInMemory(EstimateRunBytes(n, 1, 0), uint64_t{32} << 30, "net.yml", n).ok());
  EXPECT_TRUE(CheckRunFitsInMemory(est, 0, "net.yml", n).ok());   // unknown physical memory: no refusal
  EXPECT_EQ(EstimateRunBytes(kTwo64, kTwo64, kTwo64), kTickMax);  // saturates, never wraps
}

// --- 7. A run that ends in an error frees everything (LeakSanitizer) ----------

TEST(EngineRobustness, DeadlockedCollectivesAreFreed) {
  // Ranks 0-2 issue an all-reduce, rank 3 never does: a deadlock error. Under
  // ASan/LSan the in-flight collective handles must not leak.
  TempDir d;
  WriteConfigs(d, 4);
  testing::WriteTraces(d, 4, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    if (r != 3) nodes.push_back(testing::CollNode(0, 0, 1 << 20));
    else nodes.push_back(Comp(0, 1));
    return nodes;
  });
  auto r = testing::RunIn(d);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.status().message(), "deadlock")) << r.status().message();
}

}  // namespace
}  // namespace orrery
