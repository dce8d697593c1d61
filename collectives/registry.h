#pragma once
// The backends synk ships with. The session owns the registry it is given (no static
// registration); adding a backend is one line in registry.cc (collectives/README.md).
#include "synk/core/backend.h"

namespace synk {

// "cpu" and "cuda" (the latter loaded on demand from its own library, collectives/cuda_module.h;
// not viable in a build without CUDA or without that library, and says why).
BackendRegistry makeDefaultRegistry();

}  // namespace synk
