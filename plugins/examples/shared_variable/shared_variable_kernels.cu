// CUDA kernel of the "shared_variable" example, launched from call() on the rank's stream.
#include <cuda_runtime.h>

#include "synk/plugins/examples/shared_variable/shared_variable_kernels.h"

namespace synk_examples::shared_variable {
namespace {

constexpr int kThreads = 128;

// One thread per column: reads s, writes s_new (never s, which other slices still read).
__global__ void columnUpdate(const float* x, const float* s, float* s_new, int64_t rows,
                             int64_t cols) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float sum = 0;
  for (int64_t i = 0; i < rows; ++i)
    sum += x[i * cols + j] * s[j];
  s_new[j] = sum;
}

}  // namespace

bool haveCudaKernels() {
  return true;
}

const char* launchColumnUpdate(const float* x, const float* s, float* s_new, int64_t rows,
                               int64_t cols, void* stream) {
  if (cols == 0) return nullptr;  // a grid of zero blocks is a launch error
  const auto blocks = static_cast<unsigned>((cols + kThreads - 1) / kThreads);
  columnUpdate<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(x, s, s_new, rows, cols);
  const cudaError_t status = cudaGetLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

}  // namespace synk_examples::shared_variable
