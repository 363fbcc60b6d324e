// `orrery trace inspect / to-json / from-json`, and the clean-up after a trace
// generator: tools over Chakra trace files (the toy generators are gen/toy_traces.h).
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace orrery {

// Summary: node counts by type, collectives by type and bytes, dependency depth.
Result<std::string> InspectTrace(const std::string& path);
// One JSON object per line: the GlobalMetadata, then each Node.
Status TraceToJson(const std::string& et_path, const std::string& json_path);
Status TraceFromJson(const std::string& json_path, const std::string& et_path);

// Removes PREFIX.<k>.et for every k >= npus (left by an earlier, larger run
// under the same prefix, they would make the folder hold a different job);
// returns the paths it removed, in rank order.
Result<std::vector<std::string>> RemoveStaleRankTraces(const std::string& prefix, int npus);

}  // namespace orrery
