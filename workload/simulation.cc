#include "workload/simulation.h"

#include "workload/build.h"
#include "workload/spec.h"

namespace orrery {

BackendRegistry DefaultBackends() {
  BackendRegistry r;
  RegisterBuiltinBackends(&r);
  return r;
}

Result<RunReport> RunSimulation(const RunConfig& config, const BackendRegistry& backends,
                                const CollectiveRegistry* algorithms, const MemoryRegistry* memories) {
  const Registries registries{&backends, algorithms, memories};
  auto spec = ResolveSpec(config, registries);
  if (!spec.ok()) return spec.status();
  return RunSpec(spec.value(), registries);
}

}  // namespace orrery
