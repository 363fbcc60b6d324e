// The engine's hot path in closed form: each test compares the O(1) formula
// with the step-by-step construction it replaced.
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "system/dbt.h"
#include "system/npu_sys.h"

namespace orrery {
namespace {

// Halving-doubling's partner: `steps` single steps around the ring.
int Walk(const RingView& r, int k, int steps, bool clockwise) {
  for (int i = 0; i < steps; ++i) k = r.Next(k, clockwise);
  return k;
}

TEST(HotPathPartners, AdvanceEqualsTheWalkOnEveryPositionAndOffset) {
  for (int size : {1, 2, 3, 5, 7, 8, 12, 16, 31, 64}) {
    RingView r;
    r.size = size;
    for (int k = 0; k < size; ++k) {
      for (int steps = 0; steps <= 3 * size + 1; ++steps) {
        for (bool cw : {true, false}) {
          ASSERT_EQ(r.Advance(k, steps, cw), Walk(r, k, steps, cw))
              << "size " << size << " from " << k << " steps " << steps << (cw ? " clockwise" : " counter");
        }
      }
    }
  }
}

TEST(HotPathPartners, AdvanceByHand) {
  RingView r;
  r.size = 8;
  EXPECT_EQ(r.Advance(6, 4, true), 2);   // 6+4 = 10 = 2 mod 8
  EXPECT_EQ(r.Advance(1, 4, false), 5);  // 1-4 = -3 = 5 mod 8
  EXPECT_EQ(r.Advance(3, 8, true), 3);   // a full turn
  EXPECT_EQ(r.Advance(0, 0, false), 0);
}

// The trees as ASTRA-sim describes them, built recursively: a complete binary
// tree of size-1 nodes numbered in in-order hangs below a root that takes the
// largest (root_max, subtree on the left) or the smallest position.
struct RefTree {
  std::vector<int> parent, left, right;
};
RefTree BuildTree(int size, bool root_max) {
  RefTree t;
  t.parent.assign(size, -1);
  t.left.assign(size, -1);
  t.right.assign(size, -1);
  int depth = 1;
  for (int tmp = size; tmp > 1; tmp /= 2) ++depth;
  int next = 0;
  std::function<int(int)> build = [&](int levels) -> int {
    const int left = levels > 1 ? build(levels - 1) : -1;
    const int me = next++;
    const int right = levels > 1 ? build(levels - 1) : -1;
    t.left[me] = left;
    t.right[me] = right;
    if (left >= 0) t.parent[left] = me;
    if (right >= 0) t.parent[right] = me;
    return me;
  };
  if (root_max) {
    const int sub = depth > 1 ? build(depth - 1) : -1;
    const int root = next++;
    t.left[root] = sub;
    if (sub >= 0) t.parent[sub] = root;
  } else {
    const int root = next++;
    const int sub = depth > 1 ? build(depth - 1) : -1;
    t.right[root] = sub;
    if (sub >= 0) t.parent[sub] = root;
  }
  return t;
}

TEST(HotPathPartners, DoubleBinaryTreeEqualsTheRecursiveBuild) {
  for (int size = 1; size <= 1024; size *= 2) {
    for (bool root_max : {true, false}) {
      const RefTree ref = BuildTree(size, root_max);
      for (int k = 0; k < size; ++k) {
        const DbtLinks l = DoubleBinaryTreeAt(size, root_max, k);
        ASSERT_EQ(l.parent, ref.parent[k]) << "size " << size << " root_max " << root_max << " pos " << k;
        ASSERT_EQ(l.left, ref.left[k]) << "size " << size << " root_max " << root_max << " pos " << k;
        ASSERT_EQ(l.right, ref.right[k]) << "size " << size << " root_max " << root_max << " pos " << k;
      }
    }
  }
}

TEST(HotPathPartners, DoubleBinaryTreeOfEightByHand) {
  // root_max: positions 0..6 in-order under root 7: 3 is the subtree root,
  // 1 and 5 its children, 0 2 4 6 the leaves.
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 7).left, 3);
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 3).parent, 7);
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 5).left, 4);
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 5).right, 6);
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 6).parent, 5);
  EXPECT_EQ(DoubleBinaryTreeAt(8, true, 0).left, -1);
  // root_min: root 0, the subtree shifted by one: 4 its root, 2 and 6 its children.
  EXPECT_EQ(DoubleBinaryTreeAt(8, false, 0).right, 4);
  EXPECT_EQ(DoubleBinaryTreeAt(8, false, 2).parent, 4);
  EXPECT_EQ(DoubleBinaryTreeAt(8, false, 7).parent, 6);
}

}  // namespace
}  // namespace orrery
