// CUDA initialisers (init.h): the host's arithmetic, element by element, on the GPU.
#include <cuda_runtime.h>

#include "synk/plugins/compute/cuda/cuda_launch.cuh"
#include "synk/plugins/compute/init.h"
#include "synk/plugins/compute/init_hash.h"

namespace synk::compute::cuda {
namespace {

__global__ void uniformKernel(float* out, int64_t n, InitArgs g) {
  const float width = g.b - g.a;
  for (int64_t i = globalThread(); i < n; i += gridThreads()) {
    out[i] = __fmaf_rn(init_hash::unit(g.seed, g.offset + static_cast<uint64_t>(i)), width, g.a);
  }
}

__global__ void normalKernel(float* out, int64_t n, InitArgs g) {
  for (int64_t i = globalThread(); i < n; i += gridThreads()) {
    out[i] = __fmaf_rn(init_hash::normal(g.seed, g.offset + static_cast<uint64_t>(i)), g.b, g.a);
  }
}

}  // namespace

void uniform(void* stream, float* out, int64_t n, const InitArgs& args) {
  if (n <= 0) return;
  uniformKernel<<<blocksFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, n, args);
  checkLaunch("uniform initialiser kernel");
}

void normal(void* stream, float* out, int64_t n, const InitArgs& args) {
  if (n <= 0) return;
  normalKernel<<<blocksFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, n, args);
  checkLaunch("normal initialiser kernel");
}

}  // namespace synk::compute::cuda
