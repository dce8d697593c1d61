#include "synk/collectives/registry.h"

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/collectives/cuda_loader.h"

namespace synk {

BackendRegistry makeDefaultRegistry() {
  BackendRegistry registry;
  registry.add(makeCpuBackendFactory());
  registry.add(makeCudaBackendLoader());  // loads libsynk_cuda_backend.so when asked
  return registry;
}

}  // namespace synk
