// The generator's communication streams (gen/builder.h, CommStreamOf): a
// stream per communicator kind, written as comm_stream and set by ToNpuGraph
// alike; --comm-streams=one writes none (ASTRA-sim's single slot).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "extern/et_io.h"
#include "gen/gen_args.h"
#include "gen/strategy.h"
#include "tests/gen/gen_test_util.h"
#include "tests/test_util.h"
#include "workload/graph.h"

namespace orrery::gen {
namespace {

using orrery::testing::TempDir;

TEST(GenCommStreams, StreamOfEachCommunicatorKind) {
  EXPECT_EQ(CommStreamOf(Axes(Axis::kTp)), 0);
  EXPECT_EQ(CommStreamOf(Axes(Axis::kCp)), 1);
  EXPECT_EQ(CommStreamOf(Axes(Axis::kEp)), 2);
  EXPECT_EQ(CommStreamOf(Axes(Axis::kDp)), 3);
  EXPECT_EQ(CommStreamOf(Axes(Axis::kPp)), 4);
  EXPECT_EQ(CommStreamOf(kDenseDp), 3);
  EXPECT_EQ(CommStreamOf(kExpertDp), 3);
  EXPECT_EQ(CommStreamOf(Axes(Axis::kCp) | Axes(Axis::kEp)), 3);  // dense DP with dp = 1: still data-parallel
  EXPECT_EQ(CommStreamOf(0), 0);                                  // a group of one
}

// The stream each node should carry, by the rule (gen/builder.h) and the
// generator's node names; -1: no attribute.
int ExpectedStream(const ChakraProtoMsg::Node& n) {
  const std::string& name = n.name();
  switch (n.type()) {
    case ChakraProtoMsg::COMM_COLL_NODE:
      if (name.find("dispatch") != std::string::npos || name.find("combine") != std::string::npos) return 2;  // EP
      if (name.find("dp_") != std::string::npos || name.find("param_ag") != std::string::npos ||
          name.find("zero3") != std::string::npos)
        return 3;  // dense and expert DP (cp·ep·dp, cp·dp), ZeRO's gathers
      return -1;   // TP (0): not written
    case ChakraProtoMsg::COMM_SEND_NODE: return name.find("kv_send") != std::string::npos ? 1 : 4;  // CP ring, PP
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE: return 5;
    default: return -1;  // compute; receives take no slot
  }
}

// A tiny MoE (4 experts, top-2, every layer) on tp 2, cp 2, ep 2, dp 2, pp 2
// (32 NPUs), ZeRO-3, activations and optimizer offloaded: every kind of node.
Workload EveryKind() {
  ModelDesc m = testing::TinyModel(2, 16);
  m.experts = 4;
  m.top_k = 2;
  m.expert_ffn = 128;
  m.moe_layer_freq = 1;
  Strategy s;
  s.tp = s.cp = s.ep = s.dp = s.pp = 2;
  s.microbatches = 2;
  s.sp = true;
  s.zero = 3;
  s.offload_activations = s.offload_optimizer = true;
  EXPECT_TRUE(ValidateStrategy(m, s).ok()) << ValidateStrategy(m, s).message();
  auto w = GenerateDense(m, s);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return std::move(w.value());
}

TEST(GenCommStreams, WrittenPerCommunicatorKindAndNoneWithOne) {
  Workload w = EveryKind();
  for (bool streams : {true, false}) {
    w.comm_streams = streams;
    TempDir d;
    ASSERT_TRUE(WriteChakra(w, d.File("t")).ok());
    std::map<int, int> seen;  // stream (-1: none) -> nodes
    for (int r : {0, 31}) {   // first and last pipeline stage
      EtReader in;
      ASSERT_TRUE(in.Open(d.File("t." + std::to_string(r) + ".et")).ok());
      ChakraProtoMsg::Node n;
      while (in.Next(&n).value()) {
        int stream = -1;
        for (const auto& a : n.attr()) {
          if (a.name() == "comm_stream") stream = static_cast<int>(AttrUint(a).value());
        }
        EXPECT_EQ(stream, streams ? ExpectedStream(n) : -1) << "rank " << r << " node " << n.id() << " " << n.name();
        ++seen[stream];
      }
    }
    if (streams) {
      for (int s : {-1, 1, 2, 3, 4, 5}) EXPECT_GT(seen[s], 0) << "stream " << s;
    } else {
      EXPECT_EQ(seen.size(), 1u);
    }
  }
}

// The in-memory graph gets what the trace loader reads back from the file.
TEST(GenCommStreams, ToNpuGraphMatchesTheWrittenTrace) {
  Workload w = EveryKind();
  TempDir d;
  ASSERT_TRUE(WriteChakra(w, d.File("t")).ok());
  std::map<std::string, int> groups;
  for (const auto& [name, ranks] : w.layout.AllGroups()) groups.emplace(name, static_cast<int>(groups.size()));
  GraphLoadOptions lo;
  lo.num_npus = static_cast<int>(w.layout.npus());
  lo.num_dims = 1;
  lo.groups = &groups;
  for (int r : {0, 31}) {
    auto file = LoadNpuGraph(d.File("t." + std::to_string(r) + ".et"), r, lo);
    ASSERT_TRUE(file.ok()) << file.status().message();
    auto mem = ToNpuGraph(w, r, groups);
    ASSERT_TRUE(mem.ok()) << mem.status().message();
    ASSERT_EQ(file->nodes.size(), mem->nodes.size());
    for (size_t i = 0; i < mem->nodes.size(); ++i) {
      EXPECT_EQ(file->nodes[i].comm_stream, mem->nodes[i].comm_stream) << "rank " << r << " node " << i;
    }
  }
}

TEST(GenCommStreams, TheFlagTakesPerGroupOrOne) {
  auto per_group = ParseGenArgs({"--model=gpt3-175b", "--comm-streams=per-group"});
  ASSERT_TRUE(per_group.ok()) << per_group.status().message();
  EXPECT_TRUE(per_group->comm_streams);
  auto one = ParseGenArgs({"--model=gpt3-175b", "--comm-streams=one"});
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_FALSE(one->comm_streams);
  EXPECT_TRUE(ParseGenArgs({"--model=gpt3-175b"})->comm_streams);  // the default
  auto bad = ParseGenArgs({"--model=gpt3-175b", "--comm-streams=two"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--comm-streams = two: unknown communication streams; allowed: per-group (a stream per communicator "
            "kind: TP 0, CP 1, EP 2, DP 3, PP 4, memory 5) or one (every node on one stream, ASTRA-sim's single "
            "communication slot)");
}

}  // namespace
}  // namespace orrery::gen
