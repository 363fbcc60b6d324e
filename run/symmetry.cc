#include "run/symmetry.h"

#include <bit>

#include "extern/et_io.h"
#include "extern/json_util.h"
#include "workload/engine_collective.h"

namespace orrery {

namespace {

// Why the configuration (not the traces) rules out one representative rank;
// "" when it does not.
std::string ConfigBlocker(const Spec& spec) {
  if (spec.run.backend != "analytical") {
    return "backend " + spec.run.backend + " is not symmetric (only analytical treats every rank alike; " +
           (spec.run.backend == "congestion-aware" ? std::string("congestion-aware models contention between ranks)")
                                                   : std::string("the others may model contention between ranks)"));
  }
  if (!spec.comm_groups.empty() || spec.groups_from_file) return "communicator groups are configured";
  if (!spec.heterogeneity.empty()) return "--heterogeneity gives NPUs their own speeds";
  const RemoteMemoryKind mem = spec.remote_memory.kind;
  if (mem == RemoteMemoryKind::kPool || mem == RemoteMemoryKind::kPerNode || !spec.files.memory_config.empty()) {
    return "remote memory is shared between ranks";
  }
  return "";
}

// Why rank 0's graph rules it out; "" when it does not.
std::string GraphBlocker(const NpuGraph& g, const SystemOptions& so) {
  for (const auto& n : g.nodes) {
    switch (n.kind) {
      case NodeKind::kSend:
      case NodeKind::kRecv: return "the trace has point-to-point messages";
      case NodeKind::kColl: {
        if (n.group >= 0) return "the trace uses communicator groups";
        const std::optional<ComType> type = ToComType(n.collective);
        if (!type)
          return std::string("the trace has a ") + CollectiveName(n.collective) +
                 " (rooted collectives differ per rank)";
        if (!AlgorithmsSymmetric(so.ImplFor(*type)))
          return "an algorithm in use (double binary tree, custom or one*) differs per rank";
        break;
      }
      default: break;
    }
  }
  return "";
}

inline void Mix(uint64_t* h, uint64_t v) {
  *h ^= v + 0x9e3779b97f4a7c15ull + (*h << 6) + (*h >> 2);
  *h *= 0x100000001b3ull;
}

// The first field in which two nodes at the same position differ (nullptr: none).
const char* NodeDifference(const NpuGraph& ga, const WorkNode& a, const NpuGraph& gb, const WorkNode& b) {
  if (a.kind != b.kind) return "type";
  if (a.is_cpu != b.is_cpu) return "is_cpu_op";
  if (a.duration_micros != b.duration_micros) return "duration_micros";
  if (a.num_ops != b.num_ops) return "num_ops";
  if (a.tensor_size != b.tensor_size) return "tensor_size";
  if (a.compute_efficiency != b.compute_efficiency) return "compute_efficiency";
  if (a.memory_efficiency != b.memory_efficiency) return "memory_efficiency";
  if (a.output_bytes != b.output_bytes) return "output_bytes";
  if (a.local_tier != b.local_tier) return "memory_tier";
  if (a.collective != b.collective) return "comm_type";
  if (a.comm_size != b.comm_size) return "comm_size";
  if (a.comm_src != b.comm_src) return "comm_src";
  if (a.comm_dst != b.comm_dst) return "comm_dst";
  if (a.comm_tag != b.comm_tag) return "comm_tag";
  if (a.comm_root != b.comm_root) return "root";
  if (a.group != b.group) return "pg_name";
  if (a.comm_stream != b.comm_stream) return "comm_stream";
  if ((a.involved < 0) != (b.involved < 0) || (a.involved >= 0 && ga.involved[a.involved] != gb.involved[b.involved])) {
    return "involved_dim";
  }
  if (a.num_deps != b.num_deps || a.child_end - a.child_begin != b.child_end - b.child_begin) return "dependencies";
  for (uint32_t i = 0; i < a.child_end - a.child_begin; ++i) {
    if (ga.children[a.child_begin + i] != gb.children[b.child_begin + i]) return "dependencies";
  }
  return nullptr;
}

}  // namespace

bool AlgorithmsSymmetric(const std::vector<AlgoSpec>& list) {
  for (const auto& a : list) {
    if (a.one || (a.kind != AlgoKind::kRing && a.kind != AlgoKind::kDirect && a.kind != AlgoKind::kHalvingDoubling)) {
      return false;
    }
  }
  return true;
}

uint64_t GraphShapeHash(const NpuGraph& g) {
  uint64_t h = 0xcbf29ce484222325ull;
  Mix(&h, g.nodes.size());
  for (const auto& n : g.nodes) {
    Mix(&h, static_cast<uint64_t>(n.kind) | (uint64_t{n.is_cpu} << 8) | (uint64_t{n.local_tier} << 9) |
                (uint64_t{n.comm_stream} << 10));
    Mix(&h, n.duration_micros);
    Mix(&h, n.num_ops);
    Mix(&h, n.tensor_size);
    Mix(&h,
        (uint64_t{std::bit_cast<uint32_t>(n.compute_efficiency)} << 32) | std::bit_cast<uint32_t>(n.memory_efficiency));
    Mix(&h, n.output_bytes);
    Mix(&h, static_cast<uint64_t>(static_cast<int64_t>(n.collective)));
    Mix(&h, n.comm_size);
    Mix(&h, static_cast<uint64_t>(static_cast<int64_t>(n.comm_src)));
    Mix(&h, static_cast<uint64_t>(static_cast<int64_t>(n.comm_dst)));
    Mix(&h, n.comm_tag);
    Mix(&h, static_cast<uint64_t>(static_cast<int64_t>(n.comm_root)));
    Mix(&h, static_cast<uint64_t>(static_cast<int64_t>(n.group)));
    if (n.involved >= 0) {
      for (bool b : g.involved[n.involved]) Mix(&h, b ? 2 : 1);
    }
    Mix(&h, n.num_deps);
    for (uint32_t c = n.child_begin; c < n.child_end; ++c) Mix(&h, g.children[c]);
  }
  return h;
}

std::string GraphDifference(const NpuGraph& a, const NpuGraph& b) {
  const size_t n = std::min(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < n; ++i) {
    if (const char* field = NodeDifference(a, a.nodes[i], b, b.nodes[i])) {
      return "at node " + std::to_string(b.nodes[i].id) + " (" + field + ")";
    }
  }
  if (a.nodes.size() != b.nodes.size()) {
    return "in its number of nodes (" + std::to_string(b.nodes.size()) + ", rank " + std::to_string(a.rank) + " has " +
           std::to_string(a.nodes.size()) + ")";
  }
  return "";
}

Result<SymmetryDecision> DecideSymmetry(const Spec& spec, const std::function<Result<NpuGraph>(int)>& load_rank,
                                        std::vector<NpuGraph>* graphs) {
  SymmetryDecision d;
  const int npus = spec.npus;
  if (spec.run.symmetry == SymmetryMode::kOff) {
    d.note = "turned off by --symmetry=off";
    return d;
  }
  d.note = ConfigBlocker(spec);
  if (!d.note.empty()) return d;
  auto g0 = load_rank(0);
  if (!g0.ok()) return g0.status();
  graphs->push_back(std::move(g0.value()));
  const NpuGraph& first = graphs->front();
  d.note = GraphBlocker(first, spec.options);
  if (!d.note.empty()) return d;
  // Byte-identical inputs are equal graphs and the source can tell cheaply;
  // only a rank whose input differs is built and compared as a graph (a
  // hash, then a full comparison).
  const uint64_t h0 = GraphShapeHash(first);
  for (int r = 1; r < npus; ++r) {
    if (spec.graphs.same_as_rank0[r]) continue;
    auto g = load_rank(r);
    if (!g.ok()) return g.status();
    // Equal hashes: a full comparison still guards against a collision.
    // Different hashes: the comparison finds where, for the note.
    const bool same_hash = GraphShapeHash(g.value()) == h0;
    std::string diff = GraphDifference(first, g.value());
    if (!same_hash && diff.empty()) diff = "in its structure";
    if (!diff.empty()) {
      d.note = "rank " + std::to_string(r) + "'s trace differs from rank 0's " + diff;
      return d;
    }
  }
  d.symmetric = true;
  d.note = "every rank runs the same trace on a symmetric network: rank 0 simulated for all " + std::to_string(npus) +
           " ranks";
  return d;
}

}  // namespace orrery
