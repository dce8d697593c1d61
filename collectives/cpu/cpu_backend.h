#pragma once
// The "cpu" backend: every rank computes on the host (HostDevice) and communicates through the
// shared-memory heaps (ShmCommunicator). Always viable.
#include <memory>

#include "synk/core/backend.h"

namespace synk {

std::unique_ptr<BackendFactory> makeCpuBackendFactory();

}  // namespace synk
