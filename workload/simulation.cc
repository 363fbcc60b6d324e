#include "workload/simulation.h"

namespace orrery {

BackendRegistry DefaultBackends() {
  BackendRegistry r;
  RegisterBuiltinBackends(&r);
  return r;
}

}  // namespace orrery
