#include "collectives/registry.h"

#include "collectives/cpu/cpu_backend.h"
#include "collectives/cuda_factory.h"

namespace synk {

BackendRegistry makeDefaultRegistry() {
  BackendRegistry registry;
  registry.add(makeCpuBackendFactory());
  registry.add(makeCudaBackendFactory());
  return registry;
}

}  // namespace synk
