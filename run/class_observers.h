// The timeline and the critical path on a run by rank classes
// (docs/design.md, "Observers on rank classes"): a rank that is not simulated
// is drawn, and walked, from its class representative's events and records
// with its own graph (node ids, names, peers), which must match the
// representative's node by node. Where that cannot be shown before the run,
// the full engine runs and the report says why.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "run/rank_classes.h"
#include "run/spec.h"
#include "workload/graph.h"

namespace orrery {

// "" when `member`'s graph matches `rep`'s node by node (kind, sizes, tags,
// streams, dependencies, durations: everything but node ids, names, peers and
// group indices); else where it differs first.
std::string AlignmentDifference(const NpuGraph& rep, const NpuGraph& member);

// Why the observers `spec` asks for cannot ride on the classes of `d` ("" when
// they can, or none is asked for). On "", `shown` holds the graphs of the
// timeline's selected ranks that are not representatives (read with `load`).
Result<std::string> PrepareClassObservers(const Spec& spec, const ClassDecision& d,
                                          const std::function<Result<NpuGraph>(int)>& load,
                                          std::vector<NpuGraph>* shown);

}  // namespace orrery
