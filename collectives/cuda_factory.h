#pragma once
// The "cuda" backend factory, implemented by collectives/cuda/ (built when CMake found CUDA with
// NCCL and cuBLAS). Programs reach it through the default registry, which loads it from
// libsynk_cuda_backend.so (collectives/cuda_module.h); linking synk_cuda calls it directly (the
// cuda test suites).
#include <memory>

#include "synk/core/backend.h"

namespace synk {

std::unique_ptr<BackendFactory> makeCudaBackendFactory();

}  // namespace synk
