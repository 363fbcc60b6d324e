// localBWAware on 2-D and 3-D networks with every algorithm, against closed
// forms (docs/parity.md, "Semantics notes"): an all-reduce is a reduce-scatter
// on each active dimension but the last, an all-reduce on the last, and an
// all-gather back; a doubleBinaryTree dimension runs a tree all-reduce of its
// whole input in each of those phases and keeps the size.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tick.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::TempDir;
Tick T(double x) { return static_cast<Tick>(x); }

void WriteAllReduce(const TempDir& d, int npus, uint64_t bytes) {
  testing::WriteTraces(d, npus, [&](int) { return std::vector<ChakraProtoMsg::Node>{testing::CollNode(1, 0, bytes)}; });
}

std::string System(const std::string& algos, int splits = 1) {
  return R"({"endpoint-delay": 10, "preferred-dataset-splits": )" + std::to_string(splits) +
         R"(, "local-mem-bw": 1600, "collective-optimization": "localBWAware", "all-reduce-implementation": )" + algos +
         "}";
}

// One dimension: `hops` link latencies per message (1 for a ring neighbour, 2 through a switch).
struct Dim {
  double lat, bw;
  int hops;
  Tick Step(uint64_t b) const { return T(hops * lat + b / GiBpsToBytesPerNs(bw)) + 10; }
};
Tick R(uint64_t b) { return 3 * T(b / 1600.0); }
// Ring phases on p NPUs (endpoint delay 10 once per phase).
Tick RingRS(const Dim& d, int p, uint64_t s) { return 10 + (p - 1) * d.Step(s / p) + (p - 1) * R(s / p); }
Tick RingAR(const Dim& d, int p, uint64_t s) { return 10 + 2 * (p - 1) * d.Step(s / p) + (p - 1) * R(s / p); }
Tick RingAG(const Dim& d, int p, uint64_t s) { return 10 + (p - 1) * d.Step(s); }
// Double binary tree on 2 NPUs, one tree phase of s bytes: the leaf starting
// at tl bundles (endpoint delay) and sends s up; the root starting at tr has
// its receive posted; from max(tr, arrival) the root bundles, reduces (R),
// sends s back and leaves; the leaf receives it and bundles once more.
struct TreeEnds {
  Tick leaf, root;
};
TreeEnds Tree2(const Dim& d, uint64_t s, Tick tl, Tick tr) {
  const Tick m = d.Step(s) - 10;  // one message, no endpoint delay
  const Tick at_root = std::max(tr, tl + 10 + m);
  const Tick root_end = at_root + 10 + R(s);
  return TreeEnds{root_end + m + 10, root_end};
}

TEST(LocalBwAware, RingOnThreeDimensions) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 4, 2, 2 ]\nbandwidth: [ 100, 50, 25 ]\n"
          "latency: [ 500, 1000, 2000 ]\n");
  d.Write("system.json", System(R"(["ring", "ring", "ring"])"));
  const uint64_t S = 1 << 20;
  WriteAllReduce(d, 16, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Dim d0{500, 100, 1}, d1{1000, 50, 2}, d2{2000, 25, 2};
  // RS dim 0 (S -> S/4), RS dim 1 (S/4 -> S/8), AR dim 2 (S/8), AG dim 1 (S/8 -> S/4), AG dim 0 (S/4 -> S).
  const Tick want = RingRS(d0, 4, S) + RingRS(d1, 2, S / 4) + RingAR(d2, 2, S / 8) + RingAG(d1, 2, S / 8) +
                    RingAG(d0, 4, S / 4);
  for (const auto& n : r->per_npu) EXPECT_EQ(n.finished_ns, want) << "rank " << n.rank;
  EXPECT_EQ(r->collectives.at(0).algorithm,
            "REDUCE_SCATTER:ring,REDUCE_SCATTER:ring,ALL_REDUCE:ring,ALL_GATHER:ring,ALL_GATHER:ring");
}

TEST(LocalBwAware, DoubleBinaryTreeOnTheFirstOfTwoDimensions) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Switch, Ring ]\nnpus_count: [ 2, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("system.json", System(R"(["doubleBinaryTree", "ring"])"));
  const uint64_t S = 1 << 20;
  WriteAllReduce(d, 8, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Dim d0{500, 100, 2}, d1{1000, 50, 1};
  // The tree's "reduce-scatter" is an all-reduce of S that keeps S (RootMax
  // tree: position 0 is the leaf); the ring all-reduce on dim 1 then has S;
  // the tree's "all-gather" is another all-reduce of S on the other tree
  // (RootMin: position 0 is the root), so the roles swap.
  const TreeEnds first = Tree2(d0, S, 0, 0);
  const Tick pos0_mid = first.leaf + RingAR(d1, 4, S), pos1_mid = first.root + RingAR(d1, 4, S);
  const TreeEnds last = Tree2(d0, S, /*leaf=pos1*/ pos1_mid, /*root=pos0*/ pos0_mid);
  for (const auto& n : r->per_npu) {
    EXPECT_EQ(n.finished_ns, n.rank % 2 == 0 ? last.root : last.leaf) << "rank " << n.rank;
  }
  EXPECT_EQ(r->collectives.at(0).algorithm,
            "REDUCE_SCATTER:doubleBinaryTree,ALL_REDUCE:ring,ALL_GATHER:doubleBinaryTree");
}

TEST(LocalBwAware, DoubleBinaryTreeOnTheLastOfThreeDimensions) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 4, 2, 2 ]\nbandwidth: [ 100, 50, 25 ]\n"
          "latency: [ 500, 1000, 2000 ]\n");
  d.Write("system.json", System(R"(["ring", "ring", "doubleBinaryTree"])"));
  const uint64_t S = 1 << 20;
  WriteAllReduce(d, 16, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Dim d0{500, 100, 1}, d1{1000, 50, 2}, d2{2000, 25, 2};
  const Tick before = RingRS(d0, 4, S) + RingRS(d1, 2, S / 4);
  const TreeEnds tree = Tree2(d2, S / 8, before, before);  // the tree keeps S/8
  const Tick after = RingAG(d1, 2, S / 8) + RingAG(d0, 4, S / 4);
  for (const auto& n : r->per_npu) {
    // Dimension 2 has stride 8; position 0 is the RootMax tree's leaf.
    EXPECT_EQ(n.finished_ns, (n.rank / 8 == 0 ? tree.leaf : tree.root) + after) << "rank " << n.rank;
  }
}

TEST(LocalBwAware, HalvingDoublingAndDirectOnTwoSwitches) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("system.json", System(R"(["halvingDoubling", "direct"])"));
  const uint64_t S = 1 << 20;
  WriteAllReduce(d, 8, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Dim d0{500, 100, 2}, d1{1000, 50, 2};
  // Halving-doubling reduce-scatter on 4: messages S/2 then S/4, the second
  // one reduced; output S/4. Direct all-reduce on 2: one message of S/8 out,
  // reduced, one back. Halving-doubling all-gather on 4: S/4 then S/2.
  const Tick rs = 10 + d0.Step(S / 2) + d0.Step(S / 4) + R(S / 4);
  const Tick ar = 3 * 10 + 2 * (d1.Step(S / 8) - 10) + R(S / 8);
  const Tick ag = 10 + d0.Step(S / 4) + d0.Step(S / 2);
  EXPECT_EQ(testing::MaxFinished(r.value()), rs + ar + ag);
  EXPECT_EQ(r->collectives.at(0).algorithm,
            "REDUCE_SCATTER:halvingDoubling,ALL_REDUCE:direct,ALL_GATHER:halvingDoubling");
}

TEST(LocalBwAware, OneRingIsASingleAllReduceOverEveryNpu) {
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100, 100 ]\nlatency: [ 500, 500 ]\n");
  d.Write("system.json", System(R"(["oneRing", "oneRing"])"));
  const uint64_t S = 1 << 20;
  WriteAllReduce(d, 8, S);
  auto r = testing::RunIn(d);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // One ring of 8 in rank order; its neighbour links alternate between the dimensions.
  EXPECT_EQ(r->collectives.at(0).algorithm, "ALL_REDUCE:oneRing");
}

}  // namespace
}  // namespace orrery
