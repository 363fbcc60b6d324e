// The vocabulary of nodes and collectives (core/node_kind.h,
// core/collective_kind.h, workload/engine_collective.h): the enums follow
// Chakra's numbers and names, the trace loader decodes comm_type once, and
// every collective kind reaches exactly one engine path.
#include <gtest/gtest.h>

#include "extern/et_io.h"
#include "tests/test_util.h"
#include "workload/engine_collective.h"
#include "workload/graph.h"

namespace orrery {
namespace {

using testing::TempDir;

TEST(CollectiveKind, NumbersAndNamesAreChakras) {
  for (int c = 0; c < kNumCollectiveKinds; ++c) {
    ASSERT_TRUE(ChakraProtoMsg::CollectiveCommType_IsValid(c)) << c;
    const std::optional<CollectiveKind> kind = CollectiveKindFromChakra(c);
    ASSERT_TRUE(kind.has_value()) << c;
    EXPECT_EQ(ChakraNumber(*kind), c);
    EXPECT_EQ(CollectiveName(*kind),
              ChakraProtoMsg::CollectiveCommType_Name(static_cast<ChakraProtoMsg::CollectiveCommType>(c)));
    EXPECT_STREQ(CollectiveName(c), CollectiveName(*kind));  // the raw-number overload of extern/et_io.h
  }
  EXPECT_FALSE(ChakraProtoMsg::CollectiveCommType_IsValid(kNumCollectiveKinds));
  EXPECT_FALSE(CollectiveKindFromChakra(kNumCollectiveKinds).has_value());
  EXPECT_FALSE(CollectiveKindFromChakra(UINT64_MAX).has_value());
  EXPECT_STREQ(CollectiveName(CollectiveKind::kNone), "UNKNOWN");
  EXPECT_STREQ(CollectiveName(-1), "UNKNOWN");
  EXPECT_STREQ(CollectiveName(10), "UNKNOWN");
}

TEST(NodeKind, NumbersAndNamesAreChakras) {
  for (int t = 0; t < kNumNodeKinds; ++t) {
    ASSERT_TRUE(ChakraProtoMsg::NodeType_IsValid(t)) << t;
    const std::optional<NodeKind> kind = NodeKindFromChakra(t);
    ASSERT_TRUE(kind.has_value()) << t;
    EXPECT_EQ(static_cast<int>(*kind), t);
    EXPECT_EQ(NodeTypeName(*kind), ChakraProtoMsg::NodeType_Name(static_cast<ChakraProtoMsg::NodeType>(t)));
    EXPECT_STREQ(NodeTypeName(t), NodeTypeName(*kind));
  }
  EXPECT_FALSE(ChakraProtoMsg::NodeType_IsValid(kNumNodeKinds));
  EXPECT_FALSE(NodeKindFromChakra(kNumNodeKinds).has_value());
  EXPECT_FALSE(NodeKindFromChakra(-1).has_value());
  EXPECT_STREQ(NodeTypeName(8), "UNKNOWN");
  EXPECT_TRUE(IsMemoryAccess(NodeKind::kMemLoad) && IsMemoryAccess(NodeKind::kMemStore));
  EXPECT_FALSE(IsMemoryAccess(NodeKind::kComp));
}

// Rooted kinds go to IssueRooted, the others to IssueCollective; REDUCE_SCATTER_BLOCK runs as REDUCE_SCATTER.
TEST(CollectiveKind, EveryKindHasExactlyOneEnginePath) {
  for (int c = 0; c < kNumCollectiveKinds; ++c) {
    const CollectiveKind kind = *CollectiveKindFromChakra(c);
    EXPECT_EQ(ToRootedKind(kind).has_value(), IsRooted(kind)) << CollectiveName(kind);
    EXPECT_NE(ToComType(kind).has_value(), IsRooted(kind)) << CollectiveName(kind);
    EXPECT_EQ(CarriesBytes(kind), kind != CollectiveKind::kBarrier);
  }
  EXPECT_EQ(ToComType(CollectiveKind::kAllReduce), ComType::kAllReduce);
  EXPECT_EQ(ToComType(CollectiveKind::kAllGather), ComType::kAllGather);
  EXPECT_EQ(ToComType(CollectiveKind::kAllToAll), ComType::kAllToAll);
  EXPECT_EQ(ToComType(CollectiveKind::kReduceScatter), ComType::kReduceScatter);
  EXPECT_EQ(ToComType(CollectiveKind::kReduceScatterBlock), ComType::kReduceScatter);
  EXPECT_EQ(ToRootedKind(CollectiveKind::kReduce), RootedKind::kReduce);
  EXPECT_EQ(ToRootedKind(CollectiveKind::kGather), RootedKind::kGather);
  EXPECT_EQ(ToRootedKind(CollectiveKind::kScatter), RootedKind::kScatter);
  EXPECT_EQ(ToRootedKind(CollectiveKind::kBroadcast), RootedKind::kBroadcast);
  EXPECT_EQ(ToRootedKind(CollectiveKind::kBarrier), RootedKind::kBarrier);
  EXPECT_FALSE(ToComType(CollectiveKind::kNone).has_value());
  EXPECT_FALSE(ToRootedKind(CollectiveKind::kNone).has_value());
}

Result<NpuGraph> Load(const TempDir& d, const std::vector<ChakraProtoMsg::Node>& nodes) {
  EtWriter w;
  if (Status st = w.Open(d.File("t.0.et"), ChakraProtoMsg::GlobalMetadata()); !st.ok()) return st;
  for (const auto& n : nodes) {
    if (Status st = w.Write(n); !st.ok()) return st;
  }
  if (Status st = w.Close(); !st.ok()) return st;
  GraphLoadOptions lo;
  lo.num_npus = 2;
  lo.num_dims = 1;
  return LoadNpuGraph(d.File("t.0.et"), 0, lo);
}

TEST(CollectiveKind, TheLoaderDecodesCommTypeOnce) {
  TempDir d;
  ChakraProtoMsg::Node barrier = testing::MakeNode(3, ChakraProtoMsg::COMM_COLL_NODE);
  testing::SetAttr(&barrier, "comm_type", uint64_t{9});  // a barrier needs no comm_size
  auto g = Load(d, {testing::CollNode(1, 8, 64), testing::CollNode(2, 5, 64), barrier,
                    testing::MakeNode(4, ChakraProtoMsg::COMP_NODE)});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->nodes[0].collective, CollectiveKind::kReduceScatterBlock);
  EXPECT_EQ(g->nodes[1].collective, CollectiveKind::kBroadcast);
  EXPECT_EQ(g->nodes[2].collective, CollectiveKind::kBarrier);
  EXPECT_EQ(g->nodes[3].collective, CollectiveKind::kNone);
  EXPECT_EQ(g->nodes[3].kind, NodeKind::kComp);
}

TEST(CollectiveKind, AnUnknownCommTypeNamesEveryValidOne) {
  TempDir d;
  auto g = Load(d, {testing::CollNode(7, 10, 64)});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            d.File("t.0.et") +
                ": node 7 (rank 0): comm_type 10 is not a Chakra CollectiveCommType; valid: "
                "0 ALL_REDUCE, 1 REDUCE, 2 ALL_GATHER, 3 GATHER, 4 SCATTER, 5 BROADCAST, 6 ALL_TO_ALL, "
                "7 REDUCE_SCATTER, 8 REDUCE_SCATTER_BLOCK, 9 BARRIER");
  // Without comm_size, the missing size is reported first (as before the enum).
  ChakraProtoMsg::Node n = testing::MakeNode(7, ChakraProtoMsg::COMM_COLL_NODE);
  testing::SetAttr(&n, "comm_type", uint64_t{10});
  g = Load(d, {n});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), d.File("t.0.et") + ": node 7 (rank 0): COMM_COLL_NODE needs attribute 'comm_size'");
}

}  // namespace
}  // namespace orrery
