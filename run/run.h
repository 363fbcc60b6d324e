// One run in one call: reads the inputs, builds the network, memory, system
// layer and per-NPU executors on one event queue, runs it, and returns the
// report — the stages of run/spec.h and run/build.h together.
//
//   RunConfig ──ResolveSpec──▶ Spec ──BuildSimulation──▶ Simulation ──Run──▶ RunReport
//
// No global state: several simulations can run in one process.
#pragma once
#include "core/status.h"
#include "network/backend.h"
#include "report/report.h"
#include "run/spec.h"

namespace orrery {

class CollectiveRegistry;
class MemoryRegistry;

// The built-in network backends (analytical, congestion-aware).
BackendRegistry DefaultBackends();

// `algorithms`: collective algorithms registered by plugins (optional);
// `memories`: memory backends (optional; the built-ins when null).
Result<RunReport> RunSimulation(const RunConfig& config, const BackendRegistry& backends,
                                const CollectiveRegistry* algorithms = nullptr,
                                const MemoryRegistry* memories = nullptr);

}  // namespace orrery
