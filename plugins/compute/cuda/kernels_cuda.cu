// The CUDA versions of kernels.h: one kernel each, launched on the given stream, grid-stride
// loops over 256-thread blocks. Reductions use a fixed grid and a fixed tree, so results do not
// depend on timing (deterministic), and accumulate in double as the host versions do.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "synk/plugins/compute/cuda/cuda_launch.cuh"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/compute/softmax_math.h"

namespace synk::compute::cuda {
namespace {

// Sums `value` over the block in a fixed tree; thread 0 gets the total.
template <int kBlock>
__device__ double blockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

__global__ void fillKernel(float* x, int64_t n, float value) {
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    x[i] = value;
}

__global__ void scaleKernel(float* x, int64_t n, float alpha) {
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    x[i] *= alpha;
}

__global__ void axpyKernel(int64_t n, float alpha, const float* x, float* y) {
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    y[i] += alpha * x[i];
}

// A small fixed grid: when the flag is valid (every step but a bad one) each block only reads it.
__global__ void restoreIfInvalidKernel(const float* flag, const float* src, float* dst, int64_t n) {
  if (*flag >= 0.0f) return;
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    dst[i] = src[i];
}

__global__ void divideByKernel(float* dst, const float* src, int64_t n, const float* divisor) {
  const float d = *divisor;
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    dst[i] = src[i] / d;
}

__global__ void partialSumKernel(const float* x, int64_t n, float* partials) {
  __shared__ double shared[kThreads];
  double total = 0;
  for (int64_t i = globalThread(); i < n; i += gridThreads())
    total += x[i];
  total = blockSum<kThreads>(total, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = static_cast<float>(total);
}

__global__ void finalSumKernel(const float* partials, int count, float* out) {
  __shared__ double shared[kThreads];
  double total = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    total += partials[i];
  total = blockSum<kThreads>(total, shared);
  if (threadIdx.x == 0) *out = static_cast<float>(total);
}

// Matrix kernels walk rows along grid y and columns along grid x (coalesced), both grid-stride:
// no 64-bit division per element. Columns: globalThread() and gridThreads() (cuda_launch.cuh).

__global__ void addBiasKernel(float* z, int64_t rows, int64_t cols, int64_t ld, const float* bias,
                              bool relu) {
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    for (int64_t j = globalThread(); j < cols; j += gridThreads()) {
      const float v = z[i * ld + j] + bias[j];
      z[i * ld + j] = relu && !(v > 0.0f) ? 0.0f : v;
    }
  }
}

// Column sums: a block owns 32 columns (one warp reads 32 consecutive floats of a row); its
// kSumRows rows of threads take every kSumRows-th row, then add their partial sums in a fixed
// tree. Deterministic, no atomics; a 4096 x 4096 matrix keeps 128 blocks of 512 threads busy.
constexpr int kSumColumns = 32;
constexpr int kSumRows = 16;

__global__ void columnSumKernel(const float* x, int64_t rows, int64_t cols, int64_t ld, float alpha,
                                const float* y_in, float* y_out) {
  __shared__ double partial[kSumRows][kSumColumns];
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kSumColumns + threadIdx.x;
  double total = 0;
  if (j < cols) {
    for (int64_t i = threadIdx.y; i < rows; i += kSumRows)
      total += x[i * ld + j];
  }
  partial[threadIdx.y][threadIdx.x] = total;
  __syncthreads();
  for (int stride = kSumRows / 2; stride > 0; stride /= 2) {
    if (threadIdx.y < stride)
      partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + stride][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && j < cols) {
    y_out[j] = (y_in ? y_in[j] : 0.0f) + alpha * static_cast<float>(partial[0][threadIdx.x]);
  }
}

__global__ void reluKernel(float* z, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    for (int64_t j = globalThread(); j < cols; j += gridThreads()) {
      float* v = z + i * ld + j;
      *v = *v > 0.0f ? *v : 0.0f;
    }
  }
}

__global__ void reluBackwardKernel(const float* a, int64_t lda, float* d, int64_t ldd, int64_t rows,
                                   int64_t cols) {
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    for (int64_t j = globalThread(); j < cols; j += gridThreads()) {
      if (!(a[i * lda + j] > 0.0f)) d[i * ldd + j] = 0.0f;
    }
  }
}

// Enough blocks for about one thread per element, at most 65,535 rows of blocks (the rest loop).
dim3 matrixGrid(int64_t rows, int64_t cols) {
  const int64_t across = (cols + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(across < 1 ? 1 : across),
              static_cast<unsigned>(rows < 1 ? 1 : (rows > 65535 ? 65535 : rows)));
}

constexpr int kCeThreads = 512;

// One block: a classifier's batch has few classes, and one block keeps the sums' order fixed.
__global__ void softmaxCrossEntropyKernel(CrossEntropyArgs g) {
  __shared__ double shared[kCeThreads];
  double loss_sum = 0, correct = 0, invalid = 0;
  for (int64_t i = threadIdx.x; i < g.rows; i += blockDim.x) {
    const float* z = g.logits + i * g.ld;
    const int32_t label = g.labels[i];
    invalid += label >= 0 && label < g.classes ? 0 : 1;
    const softmax_math::RowLoss r =
        softmax_math::row(z, g.classes, label, g.dlogits ? g.dlogits + i * g.ld_d : nullptr);
    loss_sum += r.loss;
    correct += r.best == label ? 1 : 0;
  }
  loss_sum = blockSum<kCeThreads>(loss_sum, shared);
  __syncthreads();
  correct = blockSum<kCeThreads>(correct, shared);
  __syncthreads();
  invalid = blockSum<kCeThreads>(invalid, shared);
  // Another rank's bad label (the whole batch's labels): this rank skips the step with it.
  double batch_invalid = 0;
  for (int64_t i = threadIdx.x; g.all_labels && i < g.all_rows; i += blockDim.x)
    batch_invalid += g.all_labels[i] >= 0 && g.all_labels[i] < g.classes ? 0 : 1;
  __syncthreads();
  batch_invalid = blockSum<kCeThreads>(batch_invalid, shared);
  if ((invalid > 0 || batch_invalid > 0) && g.invalid_zeroes_dlogits && g.dlogits) {
    for (int64_t i = threadIdx.x; i < g.rows; i += blockDim.x) {
      for (int64_t j = 0; j < g.classes; ++j)
        g.dlogits[i * g.ld_d + j] = 0.0f;
    }
  }
  if (threadIdx.x != 0) return;
  softmax_math::writeResults(g, loss_sum, correct, invalid > 0, batch_invalid > 0);
}

}  // namespace

void fill(void* stream, float* x, int64_t n, float value) {
  if (n <= 0) return;
  fillKernel<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(x, n, value);
  checkLaunch("fill kernel");
}

void scale(void* stream, float* x, int64_t n, float alpha) {
  if (n <= 0) return;
  scaleKernel<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(x, n, alpha);
  checkLaunch("scale kernel");
}

void axpy(void* stream, int64_t n, float alpha, const float* x, float* y) {
  if (n <= 0) return;
  axpyKernel<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(n, alpha, x, y);
  checkLaunch("axpy kernel");
}

void restoreIfInvalid(void* stream, const float* flag, const float* src, float* dst, int64_t n) {
  if (n <= 0) return;
  constexpr int kRestoreBlocks = 264;  // two per SM of an H100/H200: a copy at full bandwidth
  restoreIfInvalidKernel<<<std::min(blocksFor(n), kRestoreBlocks), kThreads, 0,
                           asStream(stream)>>>(flag, src, dst, n);
  checkLaunch("restoreIfInvalid kernel");
}

void divideBy(void* stream, float* dst, const float* src, int64_t n, const float* divisor) {
  if (n <= 0) return;
  divideByKernel<<<blocksFor(n), kThreads, 0, asStream(stream)>>>(dst, src, n, divisor);
  checkLaunch("divideBy kernel");
}

void sum(void* stream, const float* x, int64_t n, float* out, float* scratch) {
  partialSumKernel<<<static_cast<int>(kSumScratch), kThreads, 0, asStream(stream)>>>(x, n, scratch);
  checkLaunch("sum kernel (partials)");
  finalSumKernel<<<1, kThreads, 0, asStream(stream)>>>(scratch, static_cast<int>(kSumScratch), out);
  checkLaunch("sum kernel (total)");
}

void copyMatrix(void* stream, const float* src, int64_t ld_src, float* dst, int64_t ld_dst,
                int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  const cudaError_t status = cudaMemcpy2DAsync(
      dst, static_cast<size_t>(ld_dst) * sizeof(float), src,
      static_cast<size_t>(ld_src) * sizeof(float), static_cast<size_t>(cols) * sizeof(float),
      static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, asStream(stream));
  if (status != cudaSuccess) fail("copyMatrix (cudaMemcpy2DAsync)", cudaGetErrorString(status));
}

void addBias(void* stream, float* z, int64_t rows, int64_t cols, int64_t ld, const float* bias,
             bool relu) {
  if (rows * cols <= 0) return;
  addBiasKernel<<<matrixGrid(rows, cols), kThreads, 0, asStream(stream)>>>(z, rows, cols, ld, bias,
                                                                           relu);
  checkLaunch("addBias kernel");
}

void columnSum(void* stream, const float* x, int64_t rows, int64_t cols, int64_t ld, float alpha,
               const float* y_in, float* y_out) {
  if (cols <= 0) return;
  const int64_t blocks = (cols + kSumColumns - 1) / kSumColumns;
  columnSumKernel<<<static_cast<unsigned>(blocks), dim3(kSumColumns, kSumRows), 0,
                    asStream(stream)>>>(x, rows, cols, ld, alpha, y_in, y_out);
  checkLaunch("columnSum kernel");
}

void relu(void* stream, float* z, int64_t rows, int64_t cols, int64_t ld) {
  if (rows * cols <= 0) return;
  reluKernel<<<matrixGrid(rows, cols), kThreads, 0, asStream(stream)>>>(z, rows, cols, ld);
  checkLaunch("relu kernel");
}

void reluBackward(void* stream, const float* a, int64_t lda, float* d, int64_t ldd, int64_t rows,
                  int64_t cols) {
  if (rows * cols <= 0) return;
  reluBackwardKernel<<<matrixGrid(rows, cols), kThreads, 0, asStream(stream)>>>(a, lda, d, ldd,
                                                                                rows, cols);
  checkLaunch("reluBackward kernel");
}

void softmaxCrossEntropy(void* stream, const CrossEntropyArgs& args) {
  softmaxCrossEntropyKernel<<<1, kCeThreads, 0, asStream(stream)>>>(args);
  checkLaunch("softmax cross-entropy kernel");
}

}  // namespace synk::compute::cuda
