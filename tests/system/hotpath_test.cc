// The engine's hot path in closed form: each test compares the O(1) formula
// with the step-by-step construction it replaced.
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "network/backend.h"
#include "network/fixed_delay.h"
#include "network/topology.h"
#include "run/run.h"
#include "system/chunk_directory.h"
#include "system/collective_engine.h"
#include "system/dbt.h"
#include "system/match_table.h"
#include "system/npu_sys.h"
#include "system/rank_arena.h"
#include "system/tag.h"
#include "tests/test_util.h"

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

TEST(HotPathTags, PackingByHand) {
  EXPECT_EQ(tags::Chunk(-1, 5), uint64_t{5});
  EXPECT_EQ(tags::Chunk(0, 5), (uint64_t{1} << 40) | 5);
  EXPECT_EQ(tags::Chunk(2, uint64_t{1} << 24), (uint64_t{3} << 40) | (uint64_t{1} << 24));
  EXPECT_EQ(tags::Chunk(-1, tags::kMaxChunks - 1), (uint64_t{1} << 40) - 1);
  EXPECT_EQ(tags::PointToPoint(7), (uint64_t{1} << 63) | 7);
  EXPECT_TRUE(tags::IsPointToPoint(tags::PointToPoint(0)));
  EXPECT_FALSE(tags::IsPointToPoint(tags::Chunk(5, 9)));
  EXPECT_TRUE(tags::IsRaw(tags::kRaw));
  EXPECT_FALSE(tags::IsRaw(tags::Chunk(tags::kMaxGroups - 1, 0)));  // the top group stays below bit 62
  EXPECT_FALSE(tags::IsRaw(tags::PointToPoint(tags::kRaw)));        // a huge trace tag is still matched
  EXPECT_EQ(tags::TraceTag(tags::PointToPoint(123)), uint64_t{123});
}

// Chunk numbers past 2^24 no longer meet a custom op's tag: before, a chunk
// tag was (group << 40) | number and an op's tag was XORed in at bit 24, so
// chunk 2^24 + x with op tag 1 and chunk x with op tag 0 were one key.
TEST(HotPathTags, StreamNumbersPast2To24StayDistinct) {
  const uint64_t x = 17;
  const uint64_t a = tags::Chunk(-1, (uint64_t{1} << 24) + x), b = tags::Chunk(-1, x);
  EXPECT_NE(a, b);
  EXPECT_EQ(b ^ (uint64_t{1} << 24), a);  // what the old packing made of (b, op tag 1)
  // Neighbouring groups never share a chunk number's bits.
  EXPECT_NE(tags::Chunk(0, tags::kMaxChunks - 1), tags::Chunk(1, 0));
  EXPECT_EQ(tags::Chunk(0, tags::kMaxChunks - 1) + 1, tags::Chunk(1, 0));
}

// A run whose chunk numbers start just below 2^24 and cross it (the counters
// pre-advanced through the test hook) gives the same per-rank results as one
// from 0: all-reduce chunks, a broadcast and a barrier (custom ops with their
// own tags) on 8 ranks.
TEST(HotPathTags, RunCrossing2To24StreamsPerRankIsUnchanged) {
  using testing::TempDir;
  TempDir d;
  d.Write("network.yml", testing::NetworkYaml("Ring", 8, 50, 500));
  d.Write("system.json", testing::SystemJson("ring", 4, 10, 1600));
  testing::WriteTraces(d, 8, [](int) {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (uint64_t i = 0; i < 6; ++i) {
      const int type = i % 3 == 0 ? 0 : (i % 3 == 1 ? 5 : 9);  // ALL_REDUCE, BROADCAST, BARRIER
      auto n = testing::CollNode(i + 1, type, 1 << 20);
      if (type == 5) testing::SetAttr(&n, "root", uint64_t{i % 8});
      if (i > 0) n.add_data_deps(i);
      nodes.push_back(n);
    }
    return nodes;
  });
  auto base = testing::RunIn(d);
  ASSERT_TRUE(base.ok()) << base.status().message();
  CollectiveEngine::first_chunk_number_for_test = (uint64_t{1} << 24) - 3;
  auto crossed = testing::RunIn(d);
  CollectiveEngine::first_chunk_number_for_test = 0;
  ASSERT_TRUE(crossed.ok()) << crossed.status().message();
  ASSERT_EQ(base.value().per_npu.size(), 8u);
  ASSERT_EQ(crossed.value().per_npu.size(), 8u);
  EXPECT_GT(testing::MaxFinished(base.value()), Tick{0});
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(crossed.value().per_npu[r].finished_ns, base.value().per_npu[r].finished_ns) << "rank " << r;
    EXPECT_EQ(crossed.value().per_npu[r].comm_ns, base.value().per_npu[r].comm_ns) << "rank " << r;
  }
  EXPECT_EQ(crossed.value().messages, base.value().messages);
}

// The matching table against a model (per key: messages arrived, receives
// waiting in posting order) over random posts and arrivals on few keys, so
// slots settle, get erased by backward shift and are reused all the time.
TEST(HotPathMatch, TableEqualsAModelThroughErasures) {
  struct Model {
    uint32_t arrived = 0;
    std::deque<uint64_t> waiting;  // cookies
  };
  MatchTable t;
  std::map<std::tuple<uint64_t, uint64_t, int>, Model> model;
  uint64_t x = 12345;
  auto next = [&x] { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  RecvClient* const fake = reinterpret_cast<RecvClient*>(uintptr_t{0x1000});
  for (int step = 0; step < 200000; ++step) {
    const uint64_t tag = tags::Chunk(static_cast<int>(next() % 3) - 1, next() % 5);
    const uint64_t sub = next() % 2;
    const int src = static_cast<int>(next() % 7);
    Model& m = model[{tag, sub, src}];
    if (next() % 2) {
      const uint64_t cookie = static_cast<uint64_t>(step);
      const bool now = t.Post(tag, sub, src, fake, cookie);
      ASSERT_EQ(now, m.arrived > 0) << "step " << step;
      if (m.arrived > 0) {
        --m.arrived;
      } else {
        m.waiting.push_back(cookie);
      }
    } else {
      RecvClient* c = nullptr;
      uint64_t cookie = 0;
      const bool matched = t.Arrive(tag, sub, src, &c, &cookie);
      ASSERT_EQ(matched, !m.waiting.empty()) << "step " << step;
      if (matched) {
        ASSERT_EQ(cookie, m.waiting.front()) << "step " << step;
        ASSERT_EQ(c, fake);
        m.waiting.pop_front();
      } else {
        ++m.arrived;
      }
    }
    if (step % 1000 == 0) t.Sweep();
    size_t live = 0;
    for (const auto& [k, v] : model) live += (v.arrived > 0 || !v.waiting.empty()) ? 1 : 0;
    ASSERT_EQ(t.size(), live) << "step " << step;  // settled keys hold no slot
  }
}

// TakeArrived against the same kind of model: it returns exactly the keys of
// (tag, sub) holding arrivals and nobody waiting, in source order, removes
// them, and the chains stay equal to the live keys of each (tag, sub).
TEST(HotPathMatch, TakeArrivedEqualsAModel) {
  struct Model {
    uint32_t arrived = 0;
    uint32_t waiting = 0;
  };
  MatchTable t;
  std::map<std::tuple<uint64_t, uint64_t, int>, Model> model;
  uint64_t x = 4242;
  auto next = [&x] { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  RecvClient* const fake = reinterpret_cast<RecvClient*>(uintptr_t{0x1000});
  std::vector<std::pair<int, uint32_t>> out;
  for (int step = 0; step < 100000; ++step) {
    const uint64_t tag = tags::Chunk(0, next() % 4);
    const uint64_t sub = next() % 2;
    const int src = static_cast<int>(next() % 9);
    const uint64_t op = next() % 8;
    if (op == 0) {  // a chunk of (tag, sub) starts
      out.clear();
      t.TakeArrived(tag, sub, &out);
      std::vector<std::pair<int, uint32_t>> want;
      for (auto& [k, m] : model) {
        if (std::get<0>(k) == tag && std::get<1>(k) == sub && m.arrived > 0 && m.waiting == 0) {
          want.emplace_back(std::get<2>(k), m.arrived);
          m.arrived = 0;
        }
      }
      ASSERT_EQ(out, want) << "step " << step;
    } else if (op % 2) {
      Model& m = model[{tag, sub, src}];
      const bool now = t.Post(tag, sub, src, fake, 0);
      ASSERT_EQ(now, m.arrived > 0) << "step " << step;
      if (now) {
        --m.arrived;
      } else {
        ++m.waiting;
      }
    } else {
      Model& m = model[{tag, sub, src}];
      RecvClient* c = nullptr;
      uint64_t cookie = 0;
      ASSERT_EQ(t.Arrive(tag, sub, src, &c, &cookie), m.waiting > 0) << "step " << step;
      if (m.waiting > 0) {
        --m.waiting;
      } else {
        ++m.arrived;
      }
    }
    if (step % 997 == 0) t.Sweep();
    size_t live_of_key = 0;
    for (const auto& [k, m] : model) {
      if (std::get<0>(k) == tag && std::get<1>(k) == sub && (m.arrived > 0 || m.waiting > 0)) ++live_of_key;
    }
    ASSERT_EQ(t.GroupSize(tag, sub), live_of_key) << "step " << step;
  }
}

// A chunk's mailbox against a model (a count per source, positive: messages
// here, negative: receives waiting), with up to six live sources so the list
// spills past its two inline entries and shrinks back.
TEST(HotPathMatch, MailboxEqualsAModel) {
  Mailbox box;
  std::map<int, int> model;
  uint64_t x = 777;
  auto next = [&x] { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int step = 0; step < 100000; ++step) {
    const int src = static_cast<int>(next() % 6);
    int& m = model[src];
    if (next() % 2) {
      ASSERT_EQ(box.Post(src), m > 0) << "step " << step;  // takes a message that is here
      --m;
    } else {
      ASSERT_EQ(box.Arrive(src), m < 0) << "step " << step;  // meets a waiting receive
      ++m;
    }
    std::map<int, uint32_t> waiting;
    box.ForEachWaiting([&](int s, uint32_t n) { waiting[s] += n; });
    for (const auto& [s, c] : model) {
      ASSERT_EQ(waiting.count(s) ? static_cast<int>(waiting[s]) : 0, c < 0 ? -c : 0) << "step " << step;
    }
  }
}

TEST(HotPathMatch, MailboxByHand) {
  Mailbox box;
  box.AddArrived(3, 2);       // two messages from 3 came before the chunk started
  EXPECT_FALSE(box.Post(5));  // nothing from 5 yet
  EXPECT_TRUE(box.Post(3));
  EXPECT_TRUE(box.Post(3));
  EXPECT_FALSE(box.Post(3));  // the third waits
  EXPECT_TRUE(box.Arrive(5));
  EXPECT_TRUE(box.Arrive(3));
  EXPECT_FALSE(box.Arrive(3));  // nobody waits: kept
  EXPECT_TRUE(box.Post(3));
  int waits = 0;
  box.ForEachWaiting([&](int, uint32_t) { ++waits; });
  EXPECT_EQ(waits, 0);
}

TEST(HotPathDirectory, RegisterFindUnregisterByHand) {
  ChunkDirectory d;
  Chunk* const a = reinterpret_cast<Chunk*>(uintptr_t{0x1000});
  Chunk* const b = reinterpret_cast<Chunk*>(uintptr_t{0x2000});
  const uint64_t t1 = tags::Chunk(-1, 7), t2 = tags::Chunk(4, 7);
  EXPECT_EQ(d.Find(t1, 0), nullptr);
  d.Register(t1, 3, a);
  d.Register(t1, 1000, b);  // a later page
  d.Register(t2, 3, b);     // same position, another tag
  EXPECT_EQ(d.Find(t1, 3), a);
  EXPECT_EQ(d.Find(t1, 1000), b);
  EXPECT_EQ(d.Find(t1, 4), nullptr);
  EXPECT_EQ(d.Find(t1, 5000), nullptr);  // past the pages
  EXPECT_EQ(d.Find(t2, 3), b);
  EXPECT_EQ(d.live_tags(), 2u);
  d.Unregister(t1, 3);
  EXPECT_EQ(d.Find(t1, 3), nullptr);
  EXPECT_EQ(d.Find(t1, 1000), b);
  d.Unregister(t1, 1000);  // the last: the tag's entry goes
  EXPECT_EQ(d.live_tags(), 1u);
  EXPECT_EQ(d.Find(t1, 1000), nullptr);
  d.Register(t1, 1000, a);  // a member that starts later makes it anew, from recycled pages
  EXPECT_EQ(d.Find(t1, 1000), a);
  EXPECT_EQ(d.Find(t1, 999), nullptr);
  EXPECT_EQ(d.Find(t2, 3), b);
}

// A built-in algorithm's message to a chunk that has started goes straight to
// it when the backend knows the delay at send time (network/fixed_delay.h);
// every other message takes a slot and is matched at delivery. Both ways must
// simulate the same: the same runs through a wrapper that hides the analytical
// backend's FixedDelayBackend (every message by slot) and through one that
// forwards it and counts the direct sends.
class WrappedAnalytical : public NetworkBackend, public FixedDelayBackend {
 public:
  // `routed`: pass the analytical backend's one-dimension routes on (the
  // sender then charges its messages there, inline); otherwise every direct
  // send asks Delay.
  WrappedAnalytical(std::unique_ptr<NetworkBackend> inner, bool routed, uint64_t* sends, uint64_t* direct,
                    uint64_t* routes)
      : inner_(std::move(inner)), routed_(routed), sends_(sends), direct_(direct), routes_(routes) {}
  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    ++*sends_;
    inner_->Send(src, dst, bytes, token);
  }
  Tick Delay(int src, int dst, uint64_t bytes) override {
    ++*direct_;
    return fixed()->Delay(src, dst, bytes);
  }
  FixedRoute* RouteOf(int src, int dst) override {
    if (!routed_) return nullptr;
    FixedRoute* r = fixed()->RouteOf(src, dst);
    if (r) ++*routes_;
    return r;
  }
  const std::vector<DimStats>& dim_stats() const override { return inner_->dim_stats(); }

 private:
  FixedDelayBackend* fixed() { return dynamic_cast<FixedDelayBackend*>(inner_.get()); }
  std::unique_ptr<NetworkBackend> inner_;
  bool routed_;
  uint64_t* sends_;
  uint64_t* direct_;
  uint64_t* routes_;
};

class SlotOnly : public NetworkBackend {
 public:
  explicit SlotOnly(std::unique_ptr<NetworkBackend> inner, uint64_t* sends) : inner_(std::move(inner)), sends_(sends) {}
  void Send(int src, int dst, uint64_t bytes, uint64_t token) override {
    ++*sends_;
    inner_->Send(src, dst, bytes, token);
  }
  const std::vector<DimStats>& dim_stats() const override { return inner_->dim_stats(); }

 private:
  std::unique_ptr<NetworkBackend> inner_;
  uint64_t* sends_;
};

// The system configuration of the runs below: `algo` for all-reduce on both
// dimensions, and for all-gather and reduce-scatter too (ring where `algo` is
// the double binary tree, which implements all-reduce only); ring all-to-all.
std::string TwoDimSystem(const std::string& algo, int splits, const std::string& model) {
  const std::string other = algo == "doubleBinaryTree" ? "ring" : algo;
  auto both = [](const std::string& a) { return "[\"" + a + "\", \"" + a + "\"]"; };
  return "{\"scheduling-policy\": \"LIFO\", \"endpoint-delay\": 10, \"active-chunks-per-dimension\": 1, "
         "\"preferred-dataset-splits\": " +
         std::to_string(splits) + ", \"all-reduce-implementation\": " + both(algo) +
         ", \"all-gather-implementation\": " + both(other) + ", \"reduce-scatter-implementation\": " + both(other) +
         ", \"all-to-all-implementation\": " + both("ring") +
         ", \"local-mem-bw\": 1600, \"group-collective-model\": \"" + model + "\"}";
}

// `d`'s traces, network, system and groups on the full engine.
RunConfig FullEngineRun(const testing::TempDir& d) {
  RunConfig c;
  c.files.workload_prefix = d.File("trace");
  c.files.network = d.File("network.yml");
  c.files.system = d.File("system.json");
  c.files.comm_groups = d.File("groups.json");
  c.run.symmetry = SymmetryMode::kOff;
  return c;
}

TEST(HotPathDelivery, DirectDeliveryEqualsTheSlotPath) {
  using testing::TempDir;
  static uint64_t slot_sends = 0, wrapped_sends = 0, wrapped_direct = 0, routed_sends = 0, routed_direct = 0,
                  routes = 0, unused_routes = 0;
  BackendRegistry reg = DefaultBackends();
  const BackendFactory analytical = reg.Find("analytical")->factory;
  ASSERT_TRUE(reg.Register("by-slot", "test: analytical, every message by slot",
                           [analytical](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
                             auto inner = analytical(ctx);
                             if (!inner.ok()) return inner.status();
                             return std::unique_ptr<NetworkBackend>(
                                 new SlotOnly(std::move(inner.value()), &slot_sends));
                           })
                  .ok());
  ASSERT_TRUE(reg.Register("counted", "test: analytical, direct sends counted",
                           [analytical](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
                             auto inner = analytical(ctx);
                             if (!inner.ok()) return inner.status();
                             return std::unique_ptr<NetworkBackend>(
                                 new WrappedAnalytical(std::move(inner.value()), false, &wrapped_sends, &wrapped_direct,
                                                       &unused_routes));
                           })
                  .ok());
  ASSERT_TRUE(reg.Register("routed", "test: analytical, direct sends through routes",
                           [analytical](const BackendContext& ctx) -> Result<std::unique_ptr<NetworkBackend>> {
                             auto inner = analytical(ctx);
                             if (!inner.ok()) return inner.status();
                             return std::unique_ptr<NetworkBackend>(new WrappedAnalytical(std::move(inner.value()),
                                                                                          true, &routed_sends,
                                                                                          &routed_direct, &routes));
                           })
                  .ok());
  // 16 ranks on Ring(4) x Switch(4); ranks start at different times (compute
  // of rank % 3 us first), so some messages leave before their receiver's
  // chunk has started; then collectives over all ranks, over dimension 0's
  // group {0..3}, over the unaligned group {0..7} (a flat ring) and over the
  // odd ranks (a flat ring whose positions are not the ranks).
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("groups.json",
          R"({"quad": [0, 1, 2, 3], "half": [0, 1, 2, 3, 4, 5, 6, 7], "odd": [1, 3, 5, 7, 9, 11, 13, 15]})");
  testing::WriteTraces(d, 16, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(1 + r % 3);
    nodes.push_back(comp);
    uint64_t id = 2;
    for (int type : {0, 2, 7, 0}) {  // ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE
      auto n = testing::CollNode(id, type, 1000003);
      n.add_data_deps(id - 1);
      nodes.push_back(n);
      ++id;
    }
    for (const std::string g : {"quad", "half", "odd"}) {
      const bool member = g == "quad" ? r < 4 : (g == "half" ? r < 8 : r % 2 == 1);
      if (!member) continue;
      auto n = testing::CollNode(id, 0, 65536);
      testing::SetAttr(&n, "pg_name", g);
      n.add_data_deps(id - 1);
      nodes.push_back(n);
      ++id;
    }
    return nodes;
  });
  // Under ASTRA-sim's model (multi-dim-charge lowest, passed to the analytical
  // backend inside every wrapper) a pair that differs in two dimensions is
  // charged on the lower one, so it has a route, and the flat groups run ring
  // whatever the list names: the three paths must still agree.
  const std::pair<std::string, const char*> cases[] = {{"hierarchical", "ring"},
                                                       {"hierarchical", "halvingDoubling"},
                                                       {"hierarchical", "doubleBinaryTree"},
                                                       {"hierarchical", "direct"},
                                                       {"astra-sim", "ring"},
                                                       {"astra-sim", "halvingDoubling"},
                                                       {"astra-sim", "doubleBinaryTree"},
                                                       {"astra-sim", "direct"}};
  for (const auto& [model, algo] : cases) {
    for (int splits : {1, 4}) {
      d.Write("system.json", TwoDimSystem(algo, splits, model));
      auto run = [&](const std::string& backend) {
        RunConfig c = FullEngineRun(d);
        c.run.backend = backend;
        return RunSimulation(c, reg);
      };
      slot_sends = wrapped_sends = wrapped_direct = routed_sends = routed_direct = routes = 0;
      auto by_slot = run("by-slot");
      auto counted = run("counted");
      auto routed = run("routed");
      ASSERT_TRUE(by_slot.ok()) << by_slot.status().message();
      ASSERT_TRUE(counted.ok()) << counted.status().message();
      ASSERT_TRUE(routed.ok()) << routed.status().message();
      const RunReport& a = by_slot.value();
      const std::string where = model + " " + algo + " splits " + std::to_string(splits);
      // Every message of the slot run went through NetworkBackend::Send.
      EXPECT_EQ(slot_sends, a.messages) << where;
      // The other runs sent messages directly (ring, halving-doubling and the
      // tree receive through the chunk's Mailbox; direct does not), and
      // some (before their receiver started) by slot; together they are the
      // same messages. With routes, a direct send between NPUs that differ
      // in one dimension asks no Delay; the flat groups' neighbours differ in
      // two (7 -> 0 of "half", 3 -> 5 of "odd"), so Delay is still asked.
      if (model == "astra-sim") {
        EXPECT_GT(routes, 0u) << where;
        EXPECT_EQ(routed_direct, 0u) << where;  // every pair has a route
      } else if (std::string(algo) == "direct") {
        EXPECT_EQ(wrapped_direct, 0u) << where;
        EXPECT_EQ(routes, 0u) << where;
      } else {
        EXPECT_GT(wrapped_direct, 0u) << where;
        EXPECT_GT(wrapped_sends, 0u) << where;
        EXPECT_GT(routes, 0u) << where;
        EXPECT_GT(routed_direct, 0u) << where;
        EXPECT_LT(routed_direct, wrapped_direct) << where;
      }
      EXPECT_EQ(wrapped_direct + wrapped_sends, counted.value().messages) << where;
      EXPECT_EQ(routed_sends, wrapped_sends) << where;
      for (const RunReport* b : {&counted.value(), &routed.value()}) {
        const std::string run_name = where + (b == &counted.value() ? " (Delay)" : " (routes)");
        EXPECT_EQ(a.messages, b->messages) << run_name;
        EXPECT_EQ(a.events, b->events) << run_name;
        ASSERT_EQ(a.per_npu.size(), b->per_npu.size());
        for (size_t r = 0; r < a.per_npu.size(); ++r) {
          EXPECT_EQ(a.per_npu[r].finished_ns, b->per_npu[r].finished_ns) << run_name << " rank " << r;
          EXPECT_EQ(a.per_npu[r].comm_ns, b->per_npu[r].comm_ns) << run_name << " rank " << r;
        }
        ASSERT_EQ(a.dims.size(), b->dims.size());
        for (size_t k = 0; k < a.dims.size(); ++k) {
          EXPECT_EQ(a.dims[k].messages, b->dims[k].messages) << run_name << " dim " << k;
          EXPECT_EQ(a.dims[k].bytes, b->dims[k].bytes) << run_name << " dim " << k;
          EXPECT_EQ(a.dims[k].busy_ns, b->dims[k].busy_ns) << run_name << " dim " << k;
        }
        ASSERT_EQ(a.collectives.size(), b->collectives.size());
        for (size_t k = 0; k < a.collectives.size(); ++k) {
          EXPECT_EQ(a.collectives[k].end_ns, b->collectives[k].end_ns) << run_name << " collective " << k;
        }
      }
    }
  }
}

// A one-dimension route charges exactly what Delay does: for every pair of
// NPUs on a network of every block type (Ring, Switch, RingUni, Mesh,
// FullyConnected: 2*3*4*2*3 = 144 NPUs), sizes that repeat and change, two
// backends side by side (one asked through routes, one through Delay) give
// the same delays and the same statistics; pairs that differ in no or in
// several dimensions have no route.
TEST(HotPathDelivery, RoutesChargeWhatDelayDoes) {
  Topology topo({Dim{Block::kRing, 2, 100, 500, 1}, Dim{Block::kSwitch, 3, 50, 700, 1},
                 Dim{Block::kRingUni, 4, 25, 300, 1}, Dim{Block::kMesh, 2, 10, 900, 1},
                 Dim{Block::kFullyConnected, 3, 200, 111.5, 1}});
  EventQueue q;
  BackendContext ctx;
  ctx.queue = &q;
  ctx.topology = &topo;
  const BackendRegistry reg = DefaultBackends();
  auto by_route = reg.Find("analytical")->factory(ctx);
  auto by_delay = reg.Find("analytical")->factory(ctx);
  ASSERT_TRUE(by_route.ok() && by_delay.ok());
  auto* routes = dynamic_cast<FixedDelayBackend*>(by_route.value().get());
  auto* delays = dynamic_cast<FixedDelayBackend*>(by_delay.value().get());
  ASSERT_NE(routes, nullptr);
  ASSERT_NE(delays, nullptr);
  int routed = 0, unrouted = 0;
  for (int src = 0; src < topo.npus(); ++src) {
    for (int dst = 0; dst < topo.npus(); ++dst) {
      int dims_differ = 0;
      for (int d = 0; d < topo.num_dims(); ++d) dims_differ += topo.Coord(src, d) != topo.Coord(dst, d);
      FixedRoute* r = routes->RouteOf(src, dst);
      ASSERT_EQ(r != nullptr, dims_differ == 1) << src << " -> " << dst;
      if (!r) {
        ++unrouted;
        continue;
      }
      ++routed;
      for (uint64_t bytes : {uint64_t{1000}, uint64_t{1000}, uint64_t{12345}, uint64_t{1} << 30, uint64_t{0}}) {
        ASSERT_EQ(r->Charge(bytes), delays->Delay(src, dst, bytes)) << src << " -> " << dst << " bytes " << bytes;
      }
    }
  }
  EXPECT_GT(routed, 0);
  EXPECT_GT(unrouted, 0);
  const auto& a = by_route.value()->dim_stats();
  const auto& b = by_delay.value()->dim_stats();
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  for (size_t d = 0; d < a.size(); ++d) {
    EXPECT_GT(a[d].messages, 0u) << "dim " << d;
    EXPECT_EQ(a[d].messages, b[d].messages) << "dim " << d;
    EXPECT_EQ(a[d].bytes, b[d].bytes) << "dim " << d;
    EXPECT_EQ(a[d].busy_ns, b[d].busy_ns) << "dim " << d;
  }
  // By hand: 0 -> 1 is one Ring hop of dimension 0 (500 ns + 1000 B at
  // 100 GB/s, 1 GB = 2^30 B: 1000 / (100 * 2^30 / 1e9) = 9.31 ns, truncated: 509);
  // it adds 1 * trunc(9.31) = 9 ns of link time to dimension 0.
  const DimStats before0 = a[0], before1 = a[1];
  EXPECT_EQ(routes->RouteOf(0, 1)->Charge(1000), Tick{509});
  EXPECT_EQ(a[0].messages, before0.messages + 1);
  EXPECT_EQ(a[0].bytes, before0.bytes + 1000);
  EXPECT_EQ(a[0].busy_ns, before0.busy_ns + 9);
  // 0 -> 2 is two Switch hops of dimension 1 (2 * 700 + 1000 / (50 * 2^30 / 1e9) = 1418.6: 1418);
  // link time 2 * trunc(18.63) = 36 (truncated before the multiplication: not 37).
  EXPECT_EQ(routes->RouteOf(0, 2)->Charge(1000), Tick{1418});
  EXPECT_EQ(a[1].messages, before1.messages + 1);
  EXPECT_EQ(a[1].busy_ns, before1.busy_ns + 36);
}

// Chunks and algorithms are placed rank-major (system/rank_arena.h): rank r's
// slot k at plane k + r * slot, the lowest free plane first.
TEST(HotPathArena, SlotsByHand) {
  EXPECT_EQ(RankArena(192, 4).slot_bytes(), 192u);  // three lines: odd already
  EXPECT_EQ(RankArena(200, 4).slot_bytes(), 320u);  // four lines is even: five
  EXPECT_EQ(RankArena(1, 4).slot_bytes(), 64u);
  EXPECT_EQ(RankArena(100, 4).slot_bytes(), 192u);  // two lines: three
  RankArena a(192, 4);
  char* r2 = static_cast<char*>(a.Take(100, 2));
  char* r3 = static_cast<char*>(a.Take(192, 3));
  char* r2b = static_cast<char*>(a.Take(8, 2));
  ASSERT_NE(r2, nullptr);
  ASSERT_NE(r3, nullptr);
  ASSERT_NE(r2b, nullptr);
  EXPECT_EQ(r3 - r2, 192);             // neighbouring ranks, one plane: adjacent slots
  EXPECT_EQ(r2b - r2, 4 * 192);        // the rank's second slot: the next plane (4 ranks of 192 bytes)
  EXPECT_EQ(a.Take(193, 0), nullptr);  // larger than a slot
  EXPECT_EQ(a.Take(8, 4), nullptr);    // no such rank
  EXPECT_EQ(a.taken(), 3u);
  EXPECT_TRUE(RankArena::GiveBack(r2));
  EXPECT_EQ(a.taken(), 2u);
  EXPECT_EQ(a.Take(8, 2), r2);  // the lowest free plane again
  int on_stack = 0;
  EXPECT_FALSE(RankArena::GiveBack(&on_stack));
  // Every plane of a rank taken: the next object has no slot (the pool takes it).
  std::vector<void*> rank1;
  for (int k = 0; k < RankArena::kPlanes; ++k) rank1.push_back(a.Take(64, 1));
  for (size_t k = 0; k < rank1.size(); ++k) {
    ASSERT_NE(rank1[k], nullptr) << "plane " << k;
    EXPECT_EQ(static_cast<char*>(rank1[k]) - static_cast<char*>(rank1[0]), static_cast<ptrdiff_t>(k * 4 * 192));
  }
  EXPECT_EQ(a.Take(64, 1), nullptr);
  EXPECT_NE(a.Take(64, 0), nullptr);  // other ranks are not affected
  for (void* p : rank1) EXPECT_TRUE(RankArena::GiveBack(p));
  for (void* p : {static_cast<void*>(r2), static_cast<void*>(r3), static_cast<void*>(r2b)}) {
    EXPECT_TRUE(RankArena::GiveBack(p));
  }
  // The rank-0 slot taken after rank 1 filled up.
  EXPECT_EQ(a.taken(), 1u);
  EXPECT_TRUE(RankArena::GiveBack(static_cast<char*>(rank1[0]) - 192));
  EXPECT_EQ(a.taken(), 0u);
}

struct PooledProbe : Pooled {
  explicit PooledProbe(int* alive) : alive_(alive) { ++*alive_; }
  virtual ~PooledProbe() { --*alive_; }
  int* alive_;
  char payload[40];
};
struct LargePooledProbe : PooledProbe {
  using PooledProbe::PooledProbe;
  char more[300];
};

TEST(HotPathArena, PooledObjectsFindTheirWayBack) {
  int alive = 0;
  RankArena a(sizeof(PooledProbe), 2);
  std::vector<PooledProbe*> objs;
  objs.push_back(new (&a, 1) PooledProbe(&alive));       // in the arena
  objs.push_back(new (&a, 1) LargePooledProbe(&alive));  // too large: the pool
  objs.push_back(new (nullptr, 0) PooledProbe(&alive));  // no arena: the pool
  objs.push_back(new (&a, 7) PooledProbe(&alive));       // a rank the arena does not have: the pool
  EXPECT_EQ(a.taken(), 1u);
  EXPECT_EQ(alive, 4);
  for (PooledProbe* p : objs) delete p;  // Pooled's operator delete: arena or pool by address
  EXPECT_EQ(alive, 0);
  EXPECT_EQ(a.taken(), 0u);
  // A second arena alive at once: each takes back only its own.
  RankArena b(sizeof(PooledProbe), 2);
  PooledProbe* pa = new (&a, 0) PooledProbe(&alive);
  PooledProbe* pb = new (&b, 0) PooledProbe(&alive);
  EXPECT_EQ(a.taken(), 1u);
  EXPECT_EQ(b.taken(), 1u);
  delete pb;
  EXPECT_EQ(a.taken(), 1u);
  EXPECT_EQ(b.taken(), 0u);
  delete pa;
  EXPECT_EQ(a.taken(), 0u);
}

// Placement changes addresses, never results: runs with and without rank
// arenas give the same numbers, also when a rank has more live chunks and
// algorithms than planes (40 chunks of one collective and, while
// they wait in their queues, 40 algorithms; the ones past 32 come from the
// pool), for every built-in algorithm and a communicator group.
TEST(HotPathArena, PlacementChangesNoResult) {
  using testing::TempDir;
  TempDir d;
  d.Write("network.yml",
          "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n");
  d.Write("groups.json", R"({"odd": [1, 3, 5, 7]})");
  testing::WriteTraces(d, 8, [](int r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    auto comp = testing::MakeNode(1, ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(1 + r % 3);
    nodes.push_back(comp);
    uint64_t id = 2;
    for (int type : {0, 2, 7}) {  // ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER
      auto n = testing::CollNode(id, type, 4000037);
      n.add_data_deps(id - 1);
      nodes.push_back(n);
      ++id;
    }
    if (r % 2 == 1) {
      auto n = testing::CollNode(id, 0, 65536);
      testing::SetAttr(&n, "pg_name", std::string("odd"));
      n.add_data_deps(id - 1);
      nodes.push_back(n);
    }
    return nodes;
  });
  for (const char* algo : {"ring", "halvingDoubling", "doubleBinaryTree", "direct"}) {
    for (int splits : {4, 40}) {
      d.Write("system.json", TwoDimSystem(algo, splits, "astra-sim"));
      auto run = [&](bool arenas) {
        CollectiveEngine::place_by_rank_for_test = arenas;
        auto report = RunSimulation(FullEngineRun(d), DefaultBackends());
        CollectiveEngine::place_by_rank_for_test = true;
        return report;
      };
      const uint64_t taken0 = RankArena::SlotsTakenEver(), full0 = RankArena::RanksFullEver();
      auto pooled = run(false);
      const uint64_t taken1 = RankArena::SlotsTakenEver();
      auto placed = run(true);
      // The pooled run used no arena; the placed one did, and with 40 chunks
      // some ranks ran out of planes (those objects came from the pool).
      EXPECT_EQ(taken1, taken0) << algo << " splits " << splits;
      EXPECT_GT(RankArena::SlotsTakenEver(), taken1) << algo << " splits " << splits;
      if (splits == 40) {
        EXPECT_GT(RankArena::RanksFullEver(), full0) << algo << " splits " << splits;
      }
      ASSERT_TRUE(pooled.ok()) << pooled.status().message();
      ASSERT_TRUE(placed.ok()) << placed.status().message();
      const RunReport& a = pooled.value();
      const RunReport& b = placed.value();
      const std::string where = std::string(algo) + " splits " + std::to_string(splits);
      EXPECT_GT(testing::MaxFinished(a), Tick{0}) << where;
      EXPECT_EQ(a.messages, b.messages) << where;
      EXPECT_EQ(a.events, b.events) << where;
      ASSERT_EQ(a.per_npu.size(), b.per_npu.size());
      for (size_t r = 0; r < a.per_npu.size(); ++r) {
        EXPECT_EQ(a.per_npu[r].finished_ns, b.per_npu[r].finished_ns) << where << " rank " << r;
        EXPECT_EQ(a.per_npu[r].comm_ns, b.per_npu[r].comm_ns) << where << " rank " << r;
        EXPECT_EQ(a.per_npu[r].exposed_comm_ns, b.per_npu[r].exposed_comm_ns) << where << " rank " << r;
      }
      ASSERT_EQ(a.collectives.size(), b.collectives.size());
      for (size_t k = 0; k < a.collectives.size(); ++k) {
        EXPECT_EQ(a.collectives[k].end_ns, b.collectives[k].end_ns) << where << " collective " << k;
      }
    }
  }
}

}  // namespace
}  // namespace orrery
