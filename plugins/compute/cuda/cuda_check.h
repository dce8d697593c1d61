#pragma once
// Private to plugins/compute: turns a CUDA or cuBLAS failure into sdk::Error(Device) naming the
// operation, so a model's call fails with CUDA's reason instead of crashing.
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::compute::cuda {

[[noreturn]] inline void fail(const char* what, const char* why) {
  throw sdk::Error(sdk::Status::Device, std::string(what) + " failed: " + why);
}

}  // namespace synk::compute::cuda
