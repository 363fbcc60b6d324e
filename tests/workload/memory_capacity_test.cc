// Capacity tracking on its own (workload/memory_capacity.h): a node's HBM
// bytes live until its last child ends, a store fills and a load empties the
// remote tier, and a shortage is an error or, allowed, one warning per rank.
#include <gtest/gtest.h>

#include "workload/memory_capacity.h"

namespace orrery {
namespace {

// 0 -> 1, 0 -> 2; 3 alone.
NpuGraph Fork() {
  NpuGraph g;
  g.nodes.resize(4);
  for (uint32_t i = 0; i < 4; ++i) g.nodes[i].id = i;
  g.children = {1, 2};
  g.nodes[0].child_begin = 0, g.nodes[0].child_end = 2;
  g.nodes[1].child_begin = g.nodes[1].child_end = 2;
  g.nodes[2].child_begin = g.nodes[2].child_end = 2;
  g.nodes[3].child_begin = g.nodes[3].child_end = 2;
  g.nodes[1].num_deps = g.nodes[2].num_deps = 1;
  return g;
}

TEST(MemoryCapacity, BytesLiveUntilTheLastChildEnds) {
  const NpuGraph g = Fork();
  MemoryCapacity cap(CapacityOptions{1000, 0, 10, false});
  ASSERT_TRUE(cap.enabled());
  RankMemory m;
  ASSERT_TRUE(cap.AddRank(0, g, &m).ok());
  cap.ResetIteration(g, &m);
  EXPECT_EQ(m.local_used, 10u);
  ASSERT_TRUE(cap.Allocate(0, g.nodes[0], 0, 100, 0, &m).ok());
  ASSERT_TRUE(cap.Allocate(0, g.nodes[3], 3, 7, 0, &m).ok());
  EXPECT_EQ(m.local_used, 117u);
  cap.NodeDone(g.nodes[0], 0, &m);  // its children have not run
  cap.NodeDone(g.nodes[3], 3, &m);  // no children: freed at once
  EXPECT_EQ(m.local_used, 110u);
  cap.NodeDone(g.nodes[1], 1, &m);
  EXPECT_EQ(m.local_used, 110u);
  cap.NodeDone(g.nodes[2], 2, &m);  // node 0's last child
  EXPECT_EQ(m.local_used, 10u);
  EXPECT_EQ(m.local_peak, 117u);
}

TEST(MemoryCapacity, ALocalShortageIsAnErrorOrOneWarningPerRank) {
  const NpuGraph g = Fork();
  for (bool allow : {false, true}) {
    MemoryCapacity cap(CapacityOptions{100, 0, 0, allow});
    RankMemory m;
    ASSERT_TRUE(cap.AddRank(2, g, &m).ok());
    cap.ResetIteration(g, &m);
    ASSERT_TRUE(cap.Allocate(2, g.nodes[0], 0, 60, 5, &m).ok());
    const Status st = cap.Allocate(2, g.nodes[1], 1, 50, 7, &m);
    const std::string what =
        "rank 2, node 1 (INVALID_NODE) allocates 50 bytes at t=7 ns with 60 of 100 local bytes "
        "in use: short by 10 bytes";
    if (!allow) {
      EXPECT_EQ(st.message(), "over capacity: " + what + " (--allow-oversubscription continues and reports the peak)");
      continue;
    }
    EXPECT_TRUE(st.ok());
    EXPECT_TRUE(cap.Allocate(2, g.nodes[2], 2, 50, 8, &m).ok());  // the rank has warned once
    EXPECT_EQ(cap.warnings(), std::vector<std::string>{what});
    EXPECT_EQ(m.local_peak, 160u);
  }
}

TEST(MemoryCapacity, StoresFillAndLoadsEmptyTheRemoteTier) {
  MemoryCapacity cap(CapacityOptions{0, 100, 0, true});
  WorkNode store, load;
  store.kind = NodeKind::kMemStore, store.tensor_size = 80, store.id = 4;
  load.kind = NodeKind::kMemLoad, load.tensor_size = 80;
  EXPECT_TRUE(cap.RemoteAccessDone(1, store, 3).ok());
  EXPECT_TRUE(cap.RemoteAccessDone(1, load, 4).ok());
  EXPECT_TRUE(cap.RemoteAccessDone(1, load, 5).ok());  // never below empty
  EXPECT_TRUE(cap.RemoteAccessDone(1, store, 6).ok());
  EXPECT_TRUE(cap.RemoteAccessDone(1, store, 9).ok());
  EXPECT_EQ(cap.remote_peak(), 160u);
  EXPECT_EQ(cap.warnings(), std::vector<std::string>{"rank 1, node 4 (MEM_STORE_NODE) stores 80 bytes at t=9 ns into "
                                                     "a remote tier of 100 bytes: short by 60 bytes"});
}

TEST(MemoryCapacity, ResidentBytesOverTheLocalCapacity) {
  MemoryCapacity cap(CapacityOptions{100, 0, 150, false});
  RankMemory m;
  EXPECT_EQ(cap.AddRank(3, Fork(), &m).message(),
            "over capacity: rank 3: resident_bytes 150 exceed the local capacity of 100 bytes "
            "(--allow-oversubscription continues and reports the peak)");
  EXPECT_FALSE(MemoryCapacity(CapacityOptions{}).enabled());
}

}  // namespace
}  // namespace orrery
