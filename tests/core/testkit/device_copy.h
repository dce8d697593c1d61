#pragma once
// The testkit computes on the host whatever the device: on a CUDA rank it copies tensors through
// the rank's stream (device_copy_cuda.cc); built without CUDA, a CUDA rank is an error
// (device_copy_unavailable.cc). On the host device both are memcpy.
#include <cstddef>

#include "synk/plugins/sdk/synk_sdk.h"

namespace testkit {

void toHost(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes);
void toDevice(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes);
// Zeroes `bytes` of a tensor without waiting (cudaMemsetAsync on the rank's stream): what the
// trivial call (`noop`) does, so that it times the runtime and not a synchronous copy.
void zero(const synk::sdk::Context& context, void* dst, size_t bytes);

}  // namespace testkit
