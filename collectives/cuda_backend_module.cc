// The entry points of libsynk_cuda_backend.so (collectives/cuda_module.h). Everything else in
// the library is hidden (cuda_backend_module.map): its copy of synk's core never binds to the
// program's, nor the program's to it.
#include "synk/collectives/cuda_factory.h"
#include "synk/collectives/cuda_module.h"

extern "C" __attribute__((visibility("default"))) const char* synk_cuda_backend_build() {
  return SYNK_BUILD_STAMP;
}

extern "C" __attribute__((visibility("default"))) synk::BackendFactory*
synk_cuda_backend_factory_v1() {
  return synk::makeCudaBackendFactory().release();
}
