// The rank-class decision's checks on point-to-point messages between
// classes (run/rank_class_checks.cc), on hand-built graphs from a source
// that declares its classes the way the generator does. A message to another
// class's member that is not simulated goes to that class's representative;
// that is exact only when the representative receives each tag from one
// member of the sending class, and as many times as the sending class's
// representative sends it. Otherwise the run must fall back, saying why.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "network/topology.h"
#include "run/rank_classes.h"
#include "run/spec.h"

namespace orrery {
namespace {

// One receive or send per entry: {kind, peer, tag}.
struct Msg {
  NodeKind kind;
  int peer;
  uint64_t tag;
};

class HandSource : public GraphSource {
 public:
  HandSource(std::vector<int> classes, std::map<int, std::vector<Msg>> msgs)
      : classes_(std::move(classes)), msgs_(std::move(msgs)) {}
  std::string Describe() const override { return "hand-built graphs"; }
  Status Check(int, const std::string&, uint64_t*, uint64_t*) const override { return Status::Ok(); }
  Result<NpuGraph> Load(int rank, const GraphLoadOptions&) const override {
    NpuGraph g;
    g.rank = rank;
    uint64_t id = 0;
    for (const Msg& m : msgs_.at(rank)) {
      WorkNode n;
      n.id = id++;
      n.kind = m.kind;
      n.comm_size = 1024;
      n.comm_tag = m.tag;
      (m.kind == NodeKind::kSend ? n.comm_dst : n.comm_src) = m.peer;
      g.nodes.push_back(n);
    }
    return g;
  }
  bool SameInputAsRank0(int) const override { return false; }
  const std::vector<int>* DeclaredClasses() const override { return &classes_; }
  bool RankPeers(int rank, std::vector<int>* peers) const override {
    peers->clear();
    for (const Msg& m : msgs_.at(rank)) peers->push_back(m.peer);
    return true;
  }

 private:
  std::vector<int> classes_;
  std::map<int, std::vector<Msg>> msgs_;
};

ClassDecision Decide(const HandSource& source) {
  static const Spec spec;  // analytical, no remote memory, nothing recorded per rank
  static const Topology topology({Dim{Block::kSwitch, 4, 100, 500, 1}});
  static const std::vector<std::vector<int>> groups;
  ClassInputs in;
  in.spec = &spec;
  in.topology = &topology;
  in.source = &source;
  in.groups = &groups;
  in.load = [&](int r) { return source.Load(r, GraphLoadOptions{}); };
  auto d = DecideRankClasses(in);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? std::move(d.value()) : ClassDecision{};
}

constexpr NodeKind kSend = NodeKind::kSend;
constexpr NodeKind kRecv = NodeKind::kRecv;

// Rank 0 gathers one message from each of ranks 1-3 (one declared class, all
// two hops from rank 0 on the Switch). Classes {0}, {1, 2, 3}; rank 1
// represents the second.
TEST(RankClassDecision, OneSenderPerTagAndClassTakesTheClassPath) {
  // Each of ranks 1-3 sends tag 7 once; rank 0 receives tag 7 once, from
  // rank 1 (the representative stands for every member's send).
  const HandSource s({0, 1, 1, 1},
                     {{0, {{kRecv, 1, 7}}}, {1, {{kSend, 0, 7}}}, {2, {{kSend, 0, 7}}}, {3, {{kSend, 0, 7}}}});
  const ClassDecision d = Decide(s);
  EXPECT_TRUE(d.use) << d.note;
  ASSERT_EQ(d.map.num_classes(), 2) << d.note;
  EXPECT_EQ(d.map.RepOf(0), 0);
  EXPECT_EQ(d.map.RepOf(3), 1);
  EXPECT_EQ(d.map.size[d.map.class_of[2]], 3);
}

TEST(RankClassDecision, OneTagFromTwoMembersOfAClassFallsBack) {
  // Rank 0 receives tag 7 from ranks 1 and 2, both of the second class: the
  // representative's one message cannot stand for two different senders.
  const HandSource s({0, 1, 1, 1}, {{0, {{kRecv, 1, 7}, {kRecv, 2, 7}, {kRecv, 3, 7}}},
                                    {1, {{kSend, 0, 7}}},
                                    {2, {{kSend, 0, 7}}},
                                    {3, {{kSend, 0, 7}}}});
  const ClassDecision d = Decide(s);
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.note, "rank 0 receives tag 7 from ranks 1 and 2 of one class");
}

TEST(RankClassDecision, UnequalSendAndReceiveCountsFallBack) {
  // Every member of the second class sends tag 7 twice, rank 0 receives it
  // once: one receive minus two sends.
  const HandSource s({0, 1, 1, 1}, {{0, {{kRecv, 1, 7}}},
                                    {1, {{kSend, 0, 7}, {kSend, 0, 7}}},
                                    {2, {{kSend, 0, 7}, {kSend, 0, 7}}},
                                    {3, {{kSend, 0, 7}, {kSend, 0, 7}}}});
  const ClassDecision d = Decide(s);
  EXPECT_FALSE(d.use);
  EXPECT_EQ(d.note,
            "rank 0 receives tag 7 from class 1 a different number of times than that class's representative "
            "sends it into its class");
}

}  // namespace
}  // namespace orrery
