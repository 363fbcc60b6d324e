// `orrery trace inspect / to-json / from-json`, and the clean-up after a trace
// generator: tools over Chakra trace files (the toy generators are gen/toy_traces.h).
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery {

// How the trace tools read a trace (the run's --ctrl-deps and --host-collectives).
struct TraceReadOptions {
  bool repair_ctrl_deps = false;
  bool replay_host_collectives = false;
};

// Summary: node counts by type, compute split into GPU and CPU, collectives by
// type and bytes, the file's process groups, dependency depth.
Result<std::string> InspectTrace(const std::string& path, const TraceReadOptions& options = {});
// One JSON object per line: the GlobalMetadata, then each Node; to stdout when `json_path` is empty.
Status TraceToJson(const std::string& et_path, const std::string& json_path);

// `orrery trace check PREFIX`: every rank's file PREFIX.<r>.et (r = 0, 1, ...
// while they exist) read as `orrery run` reads it, every problem listed rather
// than the first: the files' process groups, then each rank's nodes and edges.
struct TraceCheck {
  std::string text;       // one line per problem listed, then a summary line
  uint64_t problems = 0;  // found, listed or not
};
Result<TraceCheck> CheckTraces(const std::string& prefix, size_t limit, const TraceReadOptions& options);
Status TraceFromJson(const std::string& json_path, const std::string& et_path);

// Removes PREFIX.<k>.et for every k >= npus (left by an earlier, larger run
// under the same prefix, they would make the folder hold a different job);
// returns the paths it removed, in rank order.
Result<std::vector<std::string>> RemoveStaleRankTraces(const std::string& prefix, int npus);

}  // namespace orrery
