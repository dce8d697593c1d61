#pragma once
// The "cuda" backend factory. Implemented by collectives/cuda/ when CMake found CUDA with NCCL
// and cuBLAS, otherwise by cuda_unavailable.cc (registered, never viable, says why).
#include <memory>

#include "core/backend.h"

namespace synk {

std::unique_ptr<BackendFactory> makeCudaBackendFactory();

}  // namespace synk
