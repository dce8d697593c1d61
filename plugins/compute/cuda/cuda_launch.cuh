#pragma once
// Private to plugins/compute's .cu files: grid sizing, stream casts and launch checks.
#include <cuda_runtime.h>

#include <cstdint>

#include "synk/plugins/compute/cuda/cuda_check.h"

namespace synk::compute::cuda {

constexpr int kThreads = 256;

// Grid-stride loops: enough blocks to cover n, at most 8192 (the loops take the rest).
inline int blocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 8192 ? 8192 : blocks));
}

inline cudaStream_t asStream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

// After a launch: an invalid configuration or a sticky error fails the op with CUDA's reason.
inline void checkLaunch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) fail(what, cudaGetErrorString(status));
}

__device__ inline int64_t globalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridThreads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace synk::compute::cuda
