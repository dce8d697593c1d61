#include "collectives/registry.h"

#include "collectives/cpu/cpu_backend.h"
#include "collectives/cuda_loader.h"

namespace synk {

BackendRegistry makeDefaultRegistry() {
  BackendRegistry registry;
  registry.add(makeCpuBackendFactory());
  registry.add(makeCudaBackendLoader());  // loads libsynk_cuda_backend.so when asked
  return registry;
}

}  // namespace synk
