// One NPU's dependency graph, read from its Chakra trace and validated:
// every dependency exists, there is no cycle, every field a node needs is
// present and in range.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/collective_kind.h"
#include "core/node_kind.h"
#include "core/status.h"

namespace orrery {

struct WorkNode {
  uint64_t id = 0;
  NodeKind kind = NodeKind::kInvalid;
  bool is_cpu = false;
  // COMP: the node gives num_ops. With the roofline on, a GPU node without it
  // but with a duration_micros takes its measured duration (docs/formats.md).
  bool has_num_ops = false;
  uint64_t duration_micros = 0;
  uint64_t num_ops = 0;
  uint64_t tensor_size = 0;
  uint64_t output_bytes = 0;  // Orrery attribute: bytes of the node's output held in HBM
  // Orrery attributes (COMP, roofline): the fractions of peak-perf and of
  // local-mem-bw this kernel reaches, in (0, 1]; 1 when absent.
  float compute_efficiency = 1, memory_efficiency = 1;
  bool local_tier = false;  // MEM nodes: Orrery attribute memory_tier = "local" (HBM) or "remote" (default)
  CollectiveKind collective = CollectiveKind::kNone;  // COLL nodes: attribute 'comm_type'
  // COLL, SEND, MEM_LOAD, MEM_STORE: Orrery attribute comm_stream, 0..kMaxCommStreams-1
  // (core/limits.h); 0 when absent. Each stream has its own communication slot.
  // (Here, in the padding before comm_size: the node stays 144 bytes.)
  uint8_t comm_stream = 0;
  uint64_t comm_size = 0;
  int comm_src = -1;
  int comm_dst = -1;
  uint64_t comm_tag = 0;
  // Rooted collectives: attribute 'root', else 'comm_src', else -1: the first
  // rank of the collective's group (0 without a group; docs/formats.md).
  int comm_root = -1;
  int group = -1;         // communicator group index, -1 = all NPUs
  int involved = -1;      // index into NpuGraph::involved, -1 = all dimensions
  uint32_t num_deps = 0;  // unresolved parents at start
  uint32_t child_begin = 0, child_end = 0;
  std::string name;
};

// What the loader did besides reading, for the report's notes.
struct GraphLoadNotes {
  uint32_t rootless = 0;        // rooted collectives (not barriers) with neither 'root' nor 'comm_src'
  uint64_t first_rootless = 0;  // the first one's node id
  // Control edges dropped (GraphLoadOptions::repair_ctrl_deps): to a node not in
  // the trace, to the node itself, on a dependency cycle.
  uint64_t ctrl_dangling = 0, ctrl_self = 0, ctrl_cyclic = 0;
  // Host-side COMM_COLL nodes run as CPU ops (GraphLoadOptions::replay_host_collectives).
  uint64_t host_collectives = 0;
};

struct NpuGraph {
  int rank = 0;
  std::string path;
  std::vector<WorkNode> nodes;  // sorted by id
  std::vector<uint32_t> children;
  std::vector<std::vector<bool>> involved;
  GraphLoadNotes notes;
};

// `orrery trace check`: every problem of a trace, not only the first.
struct TraceProblems {
  size_t limit = 100;  // messages kept; the rest are only counted
  uint64_t count = 0;  // problems found
  std::vector<std::string> messages;
  void Add(std::string message) {
    if (messages.size() < limit) messages.push_back(std::move(message));
    ++count;
  }
};

struct GraphLoadOptions {
  int num_npus = 0;
  int num_dims = 0;
  // pg_name -> group index; empty when no communicator groups are configured.
  const std::map<std::string, int>* groups = nullptr;
  // --ctrl-deps=repair: control edges (ctrl_deps) to a node not in the trace,
  // to the node itself or on a dependency cycle are dropped (and counted in
  // NpuGraph::notes) instead of refused; data edges stay strict.
  bool repair_ctrl_deps = false;
  // --host-collectives=replay: a COMM_COLL node with is_cpu_op true and neither
  // comm_type nor comm_size (the host call of a collective) runs as a CPU op of
  // its duration instead of being refused.
  bool replay_host_collectives = false;
  // `trace inspect` of one file: pg_name is not read (the groups are checked by run and trace check).
  bool ignore_groups = false;
  // Set: each problem is added here and the load goes on where the graph
  // allows (one problem per node; dependencies after every node is read); the
  // load then fails with a count. Null: the first problem is the error.
  TraceProblems* problems = nullptr;
};

Result<NpuGraph> LoadNpuGraph(const std::string& path, int rank, const GraphLoadOptions& options);

}  // namespace orrery
