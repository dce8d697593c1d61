#pragma once
// The "cuda" entry of the default registry: a factory that loads the cuda backend's library
// (collectives/cuda_module.h) the first time it is asked anything, and forwards to the factory
// inside. In a build without CUDA, or when the library or CUDA's libraries are missing, the
// backend is listed but not viable, and says why.
#include <memory>

#include "synk/core/backend.h"

namespace synk {

std::unique_ptr<BackendFactory> makeCudaBackendLoader();

}  // namespace synk
