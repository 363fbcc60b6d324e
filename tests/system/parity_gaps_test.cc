// Sizes that do not divide evenly, chunked and phased as ASTRA-sim does
// (docs/parity.md, "Sizes that do not divide evenly"), and collectives whose
// copies disagree between ranks (bad input, exit 2).
#include <gtest/gtest.h>

#include "core/tick.h"
#include "extern/et_io.h"
#include "gen/toy_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

// Slow links and memory, so that one byte more or less shows in the time
// (1 byte takes ~931 ns on a link, 100 ns to reduce).
constexpr double kBw = 0.001, kLat = 500, kMem = 0.01;  // the slowest link the loader allows
constexpr Tick kEd = 10;
// A ring neighbour step of b bytes, and the reduction of b bytes.
Tick Step(uint64_t b) { return T(kLat + b / GiBpsToBytesPerNs(kBw)) + kEd; }
Tick R(uint64_t b) { return 3 * T(b / kMem); }

Tick RunRing(int p, int type, uint64_t bytes, int splits, const std::string& algo = "ring",
             const std::string& block = "Ring") {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml(block, p, kBw, kLat));
  d.Write("system.json", testing::SystemJson(algo, splits, kEd, kMem));
  EXPECT_TRUE(WriteSingleCollectiveTraces(p, static_cast<CollectiveKind>(type), bytes, d.File("trace")).ok());
  auto r = testing::RunIn(d);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? testing::MaxFinished(r.value()) : 0;
}

// Ring phases on 4 NPUs, per chunk of c bytes (integer division of the chunk by the ring size).
Tick Ar(uint64_t c) { return kEd + 6 * Step(c / 4) + 3 * R(c / 4); }
Tick Rs(uint64_t c) { return kEd + 3 * Step(c / 4) + 3 * R(c / 4); }
Tick Ag(uint64_t c) { return kEd + 3 * Step(c); }

TEST(OddSizes, PrimeSizeInOneChunkFloorsTheMessage) {
  EXPECT_EQ(RunRing(4, 0, 13, 1), Ar(13));  // message floor(13 / 4) = 3
  EXPECT_EQ(RunRing(4, 7, 13, 1), Rs(13));
  EXPECT_EQ(RunRing(4, 2, 13, 1), Ag(13));  // all-gather sends the whole chunk each step
}

TEST(OddSizes, ChunkIsAtLeastOneBytePerNpuExceptAllGather) {
  // 13 bytes in 4 splits: floor = 3 < 4 NPUs, so the chunk becomes 4 bytes and
  // the collective 4 chunks of 4 bytes (16 bytes in all).
  EXPECT_EQ(RunRing(4, 0, 13, 4), 4 * Ar(4));
  EXPECT_EQ(RunRing(4, 7, 13, 4), 4 * Rs(4));
  // Fewer bytes than NPUs: 3 bytes, one split, become one chunk of 4.
  EXPECT_EQ(RunRing(4, 0, 3, 1), Ar(4));
  // All-gather keeps floor(13 / 4) = 3 and runs ceil(13 / 3) = 5 full chunks.
  EXPECT_EQ(RunRing(4, 2, 13, 4), 5 * Ag(3));
  // All-gather of fewer bytes than splits: one chunk of the whole size (ASTRA-sim never ends).
  EXPECT_EQ(RunRing(4, 2, 3, 4), Ag(3));
}

TEST(OddSizes, LastChunkIsAFullChunk) {
  // 11 bytes in 2 splits: chunk 5, ceil(11 / 5) = 3 chunks of 5 (not 5 + 5 + 1).
  EXPECT_EQ(RunRing(4, 0, 11, 2), 3 * Ar(5));
  EXPECT_EQ(RunRing(4, 2, 11, 2), 3 * Ag(5));
}

TEST(OddSizes, AllToAllOnARing) {
  // Ring all-to-all: p(p-1)/2 steps of floor(chunk / p).
  EXPECT_EQ(RunRing(4, 6, 13, 1), kEd + 6 * Step(13 / 4));
}

TEST(OddSizes, DirectOnASwitch) {
  // Direct all-reduce on a switch: all messages of floor(chunk / p) leave at
  // once, are reduced, the results go out; 13 bytes in 4 splits: 4 chunks of 4.
  auto sw = [](uint64_t b) { return T(2 * kLat + b / GiBpsToBytesPerNs(kBw)); };
  EXPECT_EQ(RunRing(4, 0, 13, 4, "direct", "Switch"), 4 * (3 * kEd + 2 * sw(1) + R(1)));
}

const char* kNet2d =
    "topology: [ Ring, Ring ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 0.001, 0.001 ]\nlatency: [ 500, 500 ]\n";

Tick Run2d(int type, uint64_t bytes, const std::string& opt) {
  TempDir d;
  d.Write("network.yml", kNet2d);
  const std::string algos = R"(["ring", "ring"])";
  d.Write("system.json", R"({"endpoint-delay": 10, "preferred-dataset-splits": 1, "local-mem-bw": 0.01,
    "collective-optimization": ")" +
                             opt + R"(", "all-reduce-implementation": )" + algos +
                             R"(, "reduce-scatter-implementation": )" + algos + R"(, "all-gather-implementation": )" +
                             algos + "}");
  EXPECT_TRUE(WriteSingleCollectiveTraces(16, static_cast<CollectiveKind>(type), bytes, d.File("trace")).ok());
  auto r = testing::RunIn(d);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? testing::MaxFinished(r.value()) : 0;
}

TEST(OddSizes, DimensionPhasesDivideAndMultiplyTheRunningSize) {
  // 13 bytes on 16 NPUs: the chunk becomes 16 bytes.
  // Baseline reduce-scatter: dim 0 takes 16 -> 4, dim 1 takes 4 -> 1.
  EXPECT_EQ(Run2d(7, 13, "baseline"), Rs(16) + Rs(4));
  // localBWAware all-reduce: RS dim 0 (16 -> 4), AR dim 1 (4), AG dim 0 (4 -> 16).
  EXPECT_EQ(Run2d(0, 13, "localBWAware"), Rs(16) + Ar(4) + Ag(4));
  // Baseline all-reduce: each dimension all-reduces the whole chunk of 16.
  EXPECT_EQ(Run2d(0, 13, "baseline"), Ar(16) + Ar(16));
  // All-gather (dimensions in reverse): 13 stays 13 (no minimum), dim 1 sends
  // 13 per step and makes 52, dim 0 sends 52 per step.
  EXPECT_EQ(Run2d(2, 13, "baseline"), Ag(13) + Ag(52));
}

TEST(OddSizes, HalvingDoublingTruncatesAtEveryHalving) {
  // All-reduce of 13 bytes on 4 NPUs (switch): messages start at floor(13 / 2) = 6
  // and are divided by 2 in floating point and truncated at each step; at the
  // turn the size is doubled back from the truncated value: 6, 3, 1 -> 2, 4.
  auto sw = [](uint64_t b) { return T(2 * kLat + b / GiBpsToBytesPerNs(kBw)); };
  const Tick want = kEd + (sw(6) + kEd) + (sw(3) + kEd) + (sw(2) + kEd) + (sw(4) + kEd) + R(3);
  EXPECT_EQ(RunRing(4, 0, 13, 1, "halvingDoubling", "Switch"), want);
}

TEST(OddSizes, OneVariantsChunkAndDivideTheSameWay) {
  // one* make the whole network one ring; on one dimension that is the same
  // ring, so the same rules give the same closed forms.
  EXPECT_EQ(RunRing(4, 0, 13, 4, "oneRing"), 4 * Ar(4));
  EXPECT_EQ(RunRing(4, 2, 11, 2, "oneRing"), 3 * Ag(5));
  auto sw = [](uint64_t b) { return T(2 * kLat + b / GiBpsToBytesPerNs(kBw)); };
  EXPECT_EQ(RunRing(4, 0, 13, 4, "oneDirect", "Switch"), 4 * (3 * kEd + 2 * sw(1) + R(1)));
  EXPECT_EQ(RunRing(4, 0, 13, 1, "oneHalvingDoubling", "Switch"),
            kEd + (sw(6) + kEd) + (sw(3) + kEd) + (sw(2) + kEd) + (sw(4) + kEd) + R(3));
}

// --- collectives that disagree between ranks ---------------------------------

std::string RunMismatch(const std::function<std::vector<ChakraProtoMsg::Node>(int)>& nodes_of,
                        const std::string& groups = "") {
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, kBw, kLat));
  d.Write("system.json", testing::SystemJson("ring", 1, kEd, kMem));
  testing::WriteTraces(d, 8, nodes_of);
  std::string args = "run --workload-configuration=" + d.File("trace") +
                     " --system-configuration=" + d.File("system.json") +
                     " --network-configuration=" + d.File("network.yml");
  if (!groups.empty()) {
    d.Write("groups.json", groups);
    args += " --comm-group-configuration=" + d.File("groups.json");
  }
  std::string err;
  const int rc = testing::RunCli(args, &err);
  EXPECT_EQ(rc, 2) << err;
  return err;
}

TEST(CollectiveMismatch, SizeDiffers) {
  const std::string err = RunMismatch([](int r) {
    return std::vector<ChakraProtoMsg::Node>{testing::CollNode(3, 0, 1024),
                                             testing::CollNode(4, 0, r == 5 ? 2097152 : 1048576)};
  });
  EXPECT_NE(err.find("orrery: collective mismatch: rank 0 node 4 is ALL_REDUCE of 1048576 bytes but rank 5 node 4 "
                     "(its 2nd collective on all NPUs) is ALL_REDUCE of 2097152 bytes"),
            std::string::npos)
      << err;
}

TEST(CollectiveMismatch, TypeDiffers) {
  const std::string err = RunMismatch(
      [](int r) { return std::vector<ChakraProtoMsg::Node>{testing::CollNode(3, r == 2 ? 2 : 0, 4096)}; });
  EXPECT_NE(err.find("collective mismatch: rank 0 node 3 is ALL_REDUCE of 4096 bytes but rank 2 node 3 "
                     "(its 1st collective on all NPUs) is ALL_GATHER of 4096 bytes"),
            std::string::npos)
      << err;
}

TEST(CollectiveMismatch, GroupDiffers) {
  const std::string err = RunMismatch(
      [](int r) {
        std::vector<ChakraProtoMsg::Node> nodes;
        if (r >= 4) return nodes;
        auto n = testing::CollNode(3, 0, 4096);
        testing::SetAttr(&n, "pg_name", std::string(r == 2 ? "tp" : "dp"));
        nodes.push_back(n);
        return nodes;
      },
      R"({"dp": [0, 1, 2, 3], "tp": [0, 1, 2, 3]})");
  EXPECT_NE(err.find("collective mismatch: rank 0 node 3 is ALL_REDUCE of 4096 bytes in group \"dp\" but rank 2 "
                     "node 3 is ALL_REDUCE of 4096 bytes in group \"tp\""),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace orrery
