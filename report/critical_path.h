// The critical path of a run: from the NPU that finishes last, back to time 0,
// the chain of nodes each of which had to finish before the next could, with
// what each segment was (compute, communication on a dimension, memory, time
// on another rank, idle). Its segments tile [0, finished] exactly.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tick.h"
#include "system/rank_class_map.h"

namespace orrery {

class Executor;
class CollectiveEngine;
class NodeRecorder;
struct NpuGraph;

struct PathSegment {
  int rank = 0;
  int iteration = 0;
  uint64_t node_id = 0;  // meaningless for an idle segment
  std::string name;      // the node's name in the trace ("" when it has none)
  std::string kind;      // compute, cpu, ALL_REDUCE (the collective), send, recv, mem_load, mem_store, metadata, idle
  Tick start_ns = 0, end_ns = 0;
  // compute | communication dimD (Block) | communication | memory | waiting on another rank | idle
  std::string category;
  std::string activity;  // what the segment's own rank did: the category above before "waiting on another rank"
};

struct PathShare {
  std::string category;
  Tick ns = 0;
};

struct CriticalPath {
  int rank = -1;  // the NPU that finishes last (the lowest rank among equals); -1: not computed
  Tick finished_ns = 0;
  bool representative = false;        // a symmetric run: the path of the representative rank, the same on every rank
  std::vector<PathSegment> segments;  // in time order, contiguous, from 0 to finished_ns
  std::vector<PathShare> categories;  // largest first (ties by name); they sum to finished_ns
  std::vector<std::pair<int, Tick>> other_ranks;  // time the path spends on each other rank, largest first
};

// Walks back from the last node of the NPU that finishes last. Rules: a node's
// segment runs from its start to its end, and before it the path goes to what
// it waited for (the dependency that finished last, or the slot's previous
// holder). A collective that started before its last member joined runs from
// that member's start, and the path continues on that member; a receive
// completed by a message runs from its send's start, and the path continues on
// the sender. Segments on ranks other than the final NPU count as "waiting on
// another rank".
//
// A run by rank classes (`classes`): every rank is walked on its class
// representative's records (members run in lockstep) with the rank's own graph
// (its node ids, names and peers), so the path is the full engine's. A receive
// crosses to the rank's own sender; a collective never crosses (its group lies
// inside one class: run/class_observers.h checks it before the run).
struct PathClasses {
  const RankClassMap* map = nullptr;
  // A rank's own graph, matched node by node to its representative's; an error when it cannot be read.
  std::function<Result<const NpuGraph*>(int rank)> graph;
};
Result<CriticalPath> FindCriticalPath(const Executor& exec, const NodeRecorder& records, const CollectiveEngine& engine,
                                      bool symmetric, const PathClasses* classes = nullptr);

}  // namespace orrery
