#include "report/critical_path.h"

#include <algorithm>
#include <map>
#include <utility>

#include "extern/et_io.h"
#include "system/collective_engine.h"
#include "workload/executor.h"
#include "workload/node_recorder.h"

namespace orrery {

namespace {

// BROADCAST, REDUCE, GATHER, SCATTER, BARRIER: over the group or all NPUs, whatever involved_dim says.
bool Rooted(const WorkNode& n) { return IsRooted(n.collective); }

class Walker {
 public:
  Walker(const Executor& exec, const NodeRecorder& records, const CollectiveEngine& engine, bool symmetric,
         const PathClasses* classes)
      : exec_(exec),
        rec_(records),
        engine_(engine),
        symmetric_(symmetric),
        classes_(classes && classes->map ? classes : nullptr),
        coll_index_(exec.npus().size()),
        graph_of_(exec.npus().size(), nullptr) {}

  Result<CriticalPath> Walk();

 private:
  // The rank whose records stand for `rank`'s: its class representative, or itself.
  int Sim(int rank) const { return classes_ ? classes_->map->RepOf(rank) : rank; }
  const std::vector<NodeRecord>& Records(int rank) const { return rec_.records(Sim(rank)); }
  // `rank`'s own graph (Visit first, with classes).
  const NpuGraph& Graph(int rank) const { return classes_ ? *graph_of_[rank] : exec_.npus()[rank].graph; }
  Status Visit(int rank);
  const WorkNode& Node(int rank, uint32_t flat) const {
    const NpuGraph& g = Graph(rank);
    return g.nodes[flat % g.nodes.size()];
  }
  int Iteration(int rank, uint32_t flat) const { return static_cast<int>(flat / Graph(rank).nodes.size()); }
  void AddNode(int rank, uint32_t flat, Tick start, Tick end);
  void AddCollective(int rank, uint32_t flat, Tick start, Tick end);
  void Push(PathSegment s);
  std::string DimsCategory(uint32_t dims) const;
  void AddIdle(int rank, Tick start, Tick end);
  std::string CommCategory(int rank, const WorkNode& n) const;
  uint32_t GroupDims(int group) const;
  std::vector<int> Members(int rank, const WorkNode& n) const;
  uint32_t FindCollective(int rank, int group, uint32_t seq);
  int FinalRank() const;
  uint32_t LastNode(int rank) const;
  std::pair<int, uint32_t> Cause(int rank, uint32_t flat);
  void SumShares(CriticalPath* out) const;

  const Executor& exec_;
  const NodeRecorder& rec_;
  const CollectiveEngine& engine_;
  bool symmetric_;
  const PathClasses* classes_;  // null: every rank is simulated (or the symmetric run)
  int final_rank_ = 0;
  std::vector<PathSegment> backward_;  // segments as found, latest first
  // Per rank, built when first needed: (group + 1) << 32 | sequence -> record index.
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> coll_index_;
  static constexpr uint32_t kUnknownDims = 0xffffffffu;
  mutable std::vector<uint32_t> group_dims_;  // per communicator group: GroupDims, once known
  std::vector<const NpuGraph*> graph_of_;     // with classes: the graphs of the ranks visited
};

Status Walker::Visit(int rank) {
  if (!classes_ || graph_of_[rank]) return Status::Ok();
  auto g = classes_->graph(rank);
  if (!g.ok()) return g.status();
  graph_of_[rank] = g.value();
  return Status::Ok();
}

// The dimensions a node's messages cross, as a category.
std::string Walker::CommCategory(int rank, const WorkNode& n) const {
  const Topology& t = engine_.topology();
  uint32_t dims = 0;
  auto add = [&](int d) { dims |= uint32_t{1} << std::min(d, 31); };
  if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv) {
    const int peer = n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src;
    for (int d = 0; d < t.num_dims(); ++d) {
      if (t.Coord(rank, d) != t.Coord(peer, d)) add(d);
    }
  } else if (n.group >= 0) {
    dims = GroupDims(n.group);
  } else {
    const std::vector<bool>* involved = Rooted(n) || n.involved < 0 ? nullptr : &Graph(rank).involved[n.involved];
    for (int d = 0; d < t.num_dims(); ++d) {
      const bool in = !involved || d >= static_cast<int>(involved->size()) || (*involved)[d];
      if (in && t.dims()[d].npus > 1) add(d);
    }
  }
  return DimsCategory(dims);
}

// The dimensions communicator group `group` spans: its whole dimensions, or,
// for a group that is not a set of whole dimensions (its collectives run as one
// flat ring over its ranks: a data-parallel group strided across dimensions),
// every dimension along which its members' coordinates differ, which is where
// its ring's messages go. Computed once per group.
uint32_t Walker::GroupDims(int group) const {
  if (group_dims_.empty()) group_dims_.assign(static_cast<size_t>(engine_.num_groups()), kUnknownDims);
  uint32_t& dims = group_dims_[group];
  if (dims != kUnknownDims) return dims;
  const Topology& t = engine_.topology();
  const CommGroup& g = engine_.group(group);
  dims = 0;
  for (int d = 0; d < t.num_dims(); ++d) {
    bool spans = g.aligned && g.dims[d];
    for (size_t i = 1; !g.aligned && i < g.ranks.size() && !spans; ++i) {
      spans = t.Coord(g.ranks[i], d) != t.Coord(g.ranks[0], d);
    }
    if (spans) dims |= uint32_t{1} << std::min(d, 31);
  }
  return dims;
}

// "communication dim1 (Switch)"; several dimensions at once: "communication dim0+dim1 (Ring+Switch)".
std::string Walker::DimsCategory(uint32_t dims) const {
  const Topology& t = engine_.topology();
  std::string ids, blocks;
  for (int d = 0; d < 31 && d < t.num_dims(); ++d) {
    if (!(dims & (uint32_t{1} << d))) continue;
    if (!ids.empty()) {
      ids += '+';
      blocks += '+';
    }
    ids.append("dim").append(std::to_string(d));
    blocks.append(BlockName(t.dims()[d].block));
  }
  if (ids.empty()) return "communication";
  std::string out = "communication ";
  out.append(ids).append(" (").append(blocks).append(")");
  return out;
}

// A collective's segment, split where the set of dimensions its chunks are on
// changes (the phase log of the rank's stream, from the collective's first mark;
// collectives on other streams, in flight at the same time, keep logs of their own).
void Walker::AddCollective(int rank, uint32_t flat, Tick start, Tick end) {
  const NodeRecord& x = Records(rank)[flat];
  const std::vector<PhaseMark>& log = rec_.phase_log(Sim(rank), Node(rank, flat).comm_stream);
  std::vector<std::pair<Tick, uint32_t>> pieces;  // (from, dims), in time order; none before the first mark
  pieces.emplace_back(start, 0);
  // From the mark before its first: the state when it began (a mark at the very
  // instant it was issued may have been merged into that one).
  for (size_t i = x.aux2 > 0 ? x.aux2 - 1 : 0; i < log.size() && log[i].at < end; ++i) {
    if (log[i].at <= start) {
      pieces.front().second = log[i].dims;
    } else {
      pieces.emplace_back(log[i].at, log[i].dims);
    }
  }
  const WorkNode& n = Node(rank, flat);
  for (size_t k = pieces.size(); k-- > 0;) {
    const Tick to = k + 1 < pieces.size() ? pieces[k + 1].first : end;
    PathSegment s;
    s.rank = rank;
    s.iteration = Iteration(rank, flat);
    s.node_id = n.id;
    s.name = n.name;
    s.kind = CollectiveName(n.collective);
    s.start_ns = pieces[k].first;
    s.end_ns = to;
    // No single dimension known (a flat group, a rooted collective): its dimensions as a whole.
    s.category = pieces[k].second == 0 || (pieces[k].second & (uint32_t{1} << 31)) ? CommCategory(rank, n)
                                                                                   : DimsCategory(pieces[k].second);
    Push(std::move(s));
  }
}

// Adds a segment (found latest first), merged with the one after it when both
// are the same node and category.
void Walker::Push(PathSegment s) {
  if (s.end_ns <= s.start_ns) return;
  s.activity = s.category;
  if (s.rank != final_rank_) s.category = "waiting on another rank";
  if (!backward_.empty()) {
    PathSegment& after = backward_.back();
    if (after.start_ns == s.end_ns && after.rank == s.rank && after.node_id == s.node_id &&
        after.iteration == s.iteration && after.kind == s.kind && after.activity == s.activity) {
      after.start_ns = s.start_ns;
      return;
    }
  }
  backward_.push_back(std::move(s));
}

void Walker::AddNode(int rank, uint32_t flat, Tick start, Tick end) {
  if (end <= start) return;
  const WorkNode& n = Node(rank, flat);
  if (n.kind == NodeKind::kColl && Records(rank)[flat].aux2 != kNoNode) {
    AddCollective(rank, flat, start, end);
    return;
  }
  PathSegment s;
  s.rank = rank;
  s.iteration = Iteration(rank, flat);
  s.node_id = n.id;
  s.name = n.name;
  s.start_ns = start;
  s.end_ns = end;
  switch (n.kind) {
    case NodeKind::kComp:
      s.kind = n.is_cpu ? "cpu" : "compute";
      s.category = "compute";
      break;
    case NodeKind::kColl:
      s.kind = CollectiveName(n.collective);
      s.category = CommCategory(rank, n);
      break;
    case NodeKind::kSend:
      s.kind = "send";
      s.category = CommCategory(rank, n);
      break;
    case NodeKind::kRecv:
      s.kind = "recv";
      s.category = CommCategory(rank, n);
      break;
    case NodeKind::kMemLoad:
      s.kind = "mem_load";
      s.category = "memory";
      break;
    case NodeKind::kMemStore:
      s.kind = "mem_store";
      s.category = "memory";
      break;
    default:
      s.kind = "metadata";
      s.category = "idle";
      break;
  }
  Push(std::move(s));
}

void Walker::AddIdle(int rank, Tick start, Tick end) {
  if (end <= start) return;
  PathSegment s;
  s.rank = rank;
  s.kind = "idle";
  s.start_ns = start;
  s.end_ns = end;
  s.activity = "idle";
  s.category = rank == final_rank_ ? "idle" : "waiting on another rank";
  backward_.push_back(std::move(s));
}

// The ranks that take part in collective `n` issued by `rank`.
std::vector<int> Walker::Members(int rank, const WorkNode& n) const {
  if (n.group >= 0) return engine_.group(n.group).ranks;
  const Topology& t = engine_.topology();
  const std::vector<bool>* involved = Rooted(n) || n.involved < 0 ? nullptr
                                                                  : &exec_.npus()[rank].graph.involved[n.involved];
  std::vector<int> out;
  for (int q = 0; q < t.npus(); ++q) {
    bool member = true;
    for (int d = 0; involved && d < t.num_dims() && member; ++d) {
      const bool in = d >= static_cast<int>(involved->size()) || (*involved)[d];
      if (!in && t.Coord(q, d) != t.Coord(rank, d)) member = false;
    }
    if (member) out.push_back(q);
  }
  return out;
}

uint32_t Walker::FindCollective(int rank, int group, uint32_t seq) {
  auto& index = coll_index_[rank];
  if (index.empty()) {
    const auto& recs = rec_.records(rank);
    for (uint32_t f = 0; f < recs.size(); ++f) {
      const WorkNode& n = Node(rank, f);
      if (n.kind != NodeKind::kColl || recs[f].aux == kNoNode) continue;
      index.emplace_back((static_cast<uint64_t>(n.group + 1) << 32) | recs[f].aux, f);
    }
    std::sort(index.begin(), index.end());
  }
  const uint64_t key = (static_cast<uint64_t>(group + 1) << 32) | seq;
  auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(key, uint32_t{0}));
  return it != index.end() && it->first == key ? it->second : kNoNode;
}

// The rank that finished last (the first among equals), or -1 when there is none.
int Walker::FinalRank() const {
  const auto& npus = exec_.npus();
  int rank = -1;
  for (size_t r = 0; r < npus.size(); ++r) {
    if (rank < 0 || npus[Sim(static_cast<int>(r))].finish > npus[Sim(rank)].finish) rank = static_cast<int>(r);
  }
  return rank;
}

// The node of `rank` that ended last (the latest record among equals).
uint32_t Walker::LastNode(int rank) const {
  const auto& last = Records(rank);
  uint32_t flat = kNoNode;
  for (uint32_t f = 0; f < last.size(); ++f) {
    if (flat == kNoNode || last[f].end >= last[flat].end) flat = f;
  }
  return flat;
}

// What made node `flat` of `rank` end when it did: itself, a later member, or a message.
std::pair<int, uint32_t> Walker::Cause(int rank, uint32_t flat) {
  const NodeRecord& x = Records(rank)[flat];
  const WorkNode& n = Node(rank, flat);
  int next_rank = rank;
  uint32_t next = flat;
  if (n.kind == NodeKind::kRecv && x.aux2 != kNoNode && x.aux != kNoNode) {
    // With classes the sender recorded is the representative standing for the rank's own sender.
    next_rank = classes_ ? n.comm_src : static_cast<int>(x.aux2);
    next = x.aux;
  } else if (n.kind == NodeKind::kColl && !symmetric_ && !classes_ && x.aux != kNoNode) {
    Tick latest = x.start;
    for (int q : Members(rank, n)) {
      if (q == rank) continue;
      const uint32_t fq = FindCollective(q, n.group, x.aux);
      // A member that joined after this rank finished (a chain's far end) did not hold it up.
      if (fq != kNoNode && rec_.records(q)[fq].start > latest && rec_.records(q)[fq].start <= x.end) {
        latest = rec_.records(q)[fq].start;
        next_rank = q;
        next = fq;
      }
    }
  }
  return {next_rank, next};
}

Result<CriticalPath> Walker::Walk() {
  CriticalPath out;
  int rank = FinalRank();
  if (rank < 0) return out;
  final_rank_ = rank;
  out.rank = rank;
  out.finished_ns = exec_.npus()[Sim(rank)].finish;
  out.representative = symmetric_;
  Tick t = out.finished_ns;
  uint32_t flat = LastNode(rank);
  size_t budget = 1;
  const int ranks = classes_ ? static_cast<int>(exec_.npus().size()) : rec_.ranks();
  for (int r = 0; r < ranks; ++r) budget += Records(r).size();
  while (flat != kNoNode && budget-- > 0) {
    ORRERY_RETURN_IF_ERROR(Visit(rank));
    const NodeRecord& x = Records(rank)[flat];
    if (x.end < t) AddIdle(rank, x.end, t);
    t = std::min(t, x.end);
    const auto [next_rank, next] = Cause(rank, flat);
    ORRERY_RETURN_IF_ERROR(Visit(next_rank));
    const NodeRecord& y = Records(next_rank)[next];
    const Tick from = std::min(y.start, t);
    AddNode(rank, flat, from, t);
    t = from;
    // Before it: what `next` waited for.
    rank = next_rank;
    if (y.why == WaitedFor::kNothing || y.pred == kNoNode) break;
    flat = y.pred;
  }
  AddIdle(rank, 0, t);
  out.segments.assign(backward_.rbegin(), backward_.rend());
  SumShares(&out);
  return out;
}

// The path's time per category and per other rank, largest first.
void Walker::SumShares(CriticalPath* out) const {
  std::map<std::string, Tick> by_category;
  std::map<int, Tick> by_rank;
  for (const PathSegment& s : out->segments) {
    by_category[s.category] += s.end_ns - s.start_ns;
    if (s.rank != final_rank_) by_rank[s.rank] += s.end_ns - s.start_ns;
  }
  for (const auto& [c, ns] : by_category) out->categories.push_back(PathShare{c, ns});
  std::stable_sort(out->categories.begin(), out->categories.end(),
                   [](const PathShare& a, const PathShare& b) { return a.ns > b.ns; });
  for (const auto& [r, ns] : by_rank) out->other_ranks.emplace_back(r, ns);
  std::stable_sort(out->other_ranks.begin(), out->other_ranks.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
}

}  // namespace

Result<CriticalPath> FindCriticalPath(const Executor& exec, const NodeRecorder& records, const CollectiveEngine& engine,
                                      bool symmetric, const PathClasses* classes) {
  return Walker(exec, records, engine, symmetric, classes).Walk();
}

}  // namespace orrery
