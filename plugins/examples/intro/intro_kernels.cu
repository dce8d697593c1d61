// CUDA kernels of the "intro" example. Nothing here runs at load time: kernels are launched
// from call(), in the rank's process after fork, on the rank's stream.
#include <cuda_runtime.h>

#include "synk/plugins/examples/intro/intro_kernels.h"

namespace synk_examples::intro {
namespace {

constexpr int kThreads = 256;

// One block: z is a single scalar and the example favours clarity over peak bandwidth.
__global__ void rowDotMean(const float* x, const float* y, float* z, int64_t rows, int64_t cols) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (int64_t i = threadIdx.x; i < rows; i += blockDim.x) {
    float dot = 0;
    for (int64_t j = 0; j < cols; ++j)
      dot += x[i * cols + j] * y[j];
    sum += dot;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  // rows == 0 gives 0/0 = NaN, as numpy's mean of nothing.
  if (threadIdx.x == 0) *z = static_cast<float>(partial[0] / static_cast<double>(rows));
}

}  // namespace

bool haveCudaKernels() {
  return true;
}

const char* launchRowDotMean(const float* x, const float* y, float* z, int64_t rows, int64_t cols,
                             void* stream) {
  rowDotMean<<<1, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(x, y, z, rows, cols);
  const cudaError_t status = cudaGetLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

}  // namespace synk_examples::intro
