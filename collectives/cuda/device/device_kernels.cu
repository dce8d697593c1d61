#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "synk/collectives/cuda/device/cuda_check.h"
#include "synk/collectives/cuda/device/device_kernels.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"

namespace synk::kernels {
namespace {

constexpr int kThreads = 256;
// Grid-stride loops: enough blocks to fill an H200 (132 SMs x 2048 threads) several times over,
// few enough that a block's loop amortises its start.
constexpr size_t kMaxBlocks = 4096;

unsigned blocksFor(size_t count) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + kThreads - 1) / kThreads));
}

// Storage type on the device and compute type, from the host's storage tag.
template <typename Tag>
struct Device {
  using Storage = Tag;
  using Compute = Tag;
};
template <>
struct Device<Half> {
  using Storage = __half;
  using Compute = float;
};
template <>
struct Device<BFloat16> {
  using Storage = __nv_bfloat16;
  using Compute = float;
};

template <typename S>
__device__ __forceinline__ auto load(S v) {
  if constexpr (std::is_same_v<S, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename S, typename V>
__device__ __forceinline__ S store(V v) {
  if constexpr (std::is_same_v<S, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<S>(v);
  }
}

// The host's lambdas, op for op: C(a + b), C(a * b), std::max, std::min.
template <typename C>
struct SumOp {
  __device__ C operator()(C a, C b) const { return C(a + b); }
};
template <typename C>
struct ProdOp {
  __device__ C operator()(C a, C b) const { return C(a * b); }
};
template <typename C>
struct MaxOp {
  __device__ C operator()(C a, C b) const { return (a < b) ? b : a; }
};
template <typename C>
struct MinOp {
  __device__ C operator()(C a, C b) const { return (b < a) ? b : a; }
};

template <typename S, typename Op>
__global__ void accumulateKernel(S* __restrict__ acc, const S* __restrict__ x, size_t count,
                                 Op op) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    acc[i] = store<S>(op(load(acc[i]), load(x[i])));
  }
}

template <typename S, typename C>
__global__ void scaleKernel(S* __restrict__ buffer, size_t count, C factor) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    buffer[i] = store<S>(load(buffer[i]) * factor);
  }
}

template <typename Word>
__global__ void fillKernel(Word* __restrict__ buffer, size_t count, Word value) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    buffer[i] = value;
  }
}

template <typename Word>
__global__ void gatherRowsKernel(Word* __restrict__ dst, const Word* __restrict__ src,
                                 size_t row_words, const int64_t* __restrict__ rows, size_t total) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const size_t row = i / row_words;
    dst[i] = src[static_cast<size_t>(rows[row]) * row_words + (i - row * row_words)];
  }
}

template <typename Word>
void launchGatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                      size_t count, cudaStream_t stream) {
  const size_t row_words = row_bytes / sizeof(Word);
  const size_t total = row_words * count;
  gatherRowsKernel<Word><<<blocksFor(total), kThreads, 0, stream>>>(
      static_cast<Word*>(dst), static_cast<const Word*>(src), row_words, rows, total);
  SYNK_CUDA_CHECK(cudaGetLastError());
}

template <typename S, typename Op>
void launchAccumulate(void* acc, const void* x, size_t count, Op op, cudaStream_t stream) {
  accumulateKernel<S, Op><<<blocksFor(count), kThreads, 0, stream>>>(
      static_cast<S*>(acc), static_cast<const S*>(x), count, op);
  SYNK_CUDA_CHECK(cudaGetLastError());
}

template <typename Word>
void launchFill(void* buffer, size_t count, const void* element, cudaStream_t stream) {
  Word value;
  std::memcpy(&value, element, sizeof(Word));
  fillKernel<Word>
      <<<blocksFor(count), kThreads, 0, stream>>>(static_cast<Word*>(buffer), count, value);
  SYNK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op,
                cudaStream_t stream) {
  if (!isElementwise(op)) {
    throw InternalError(str("accumulate: op '", reduceOpName(op), "' is not element-wise"));
  }
  if (count == 0) return;
  visitDType(dtype, [&](auto tag) {
    using S = typename Device<decltype(tag)>::Storage;
    using C = typename Device<decltype(tag)>::Compute;
    switch (op) {
      case ReduceOp::Avg:
      case ReduceOp::Sum:
        return launchAccumulate<S>(acc, x, count, SumOp<C>{}, stream);
      case ReduceOp::Prod:
        return launchAccumulate<S>(acc, x, count, ProdOp<C>{}, stream);
      case ReduceOp::Max:
        return launchAccumulate<S>(acc, x, count, MaxOp<C>{}, stream);
      case ReduceOp::Min:
        return launchAccumulate<S>(acc, x, count, MinOp<C>{}, stream);
      default:
        break;
    }
  });
}

void scale(void* buffer, size_t count, DType dtype, double factor, cudaStream_t stream) {
  if (count == 0) return;
  visitDType(dtype, [&](auto tag) {
    using S = typename Device<decltype(tag)>::Storage;
    using C = typename Device<decltype(tag)>::Compute;
    scaleKernel<S, C><<<blocksFor(count), kThreads, 0, stream>>>(static_cast<S*>(buffer), count,
                                                                 static_cast<C>(factor));
    SYNK_CUDA_CHECK(cudaGetLastError());
  });
}

void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op, cudaStream_t stream) {
  if (count == 0) return;
  // One element computed by the host kernel: the device writes exactly the host's bytes.
  alignas(8) unsigned char element[8] = {};
  host::fillIdentity(element, 1, dtype, op);
  switch (dtypeSize(dtype)) {
    case 1:
      return launchFill<uint8_t>(buffer, count, element, stream);
    case 2:
      return launchFill<uint16_t>(buffer, count, element, stream);
    case 4:
      return launchFill<uint32_t>(buffer, count, element, stream);
    case 8:
      return launchFill<uint64_t>(buffer, count, element, stream);
    default:
      break;
  }
  throw InternalError(str("fillIdentity: unexpected element size of ", dtypeName(dtype)));
}

void gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows, size_t count,
                cudaStream_t stream) {
  if (count == 0 || row_bytes == 0) return;
  const auto aligned = [&](size_t to) {
    return row_bytes % to == 0 && reinterpret_cast<uintptr_t>(dst) % to == 0 &&
           reinterpret_cast<uintptr_t>(src) % to == 0;
  };
  if (aligned(16)) return launchGatherRows<uint4>(dst, src, row_bytes, rows, count, stream);
  if (aligned(8)) return launchGatherRows<uint64_t>(dst, src, row_bytes, rows, count, stream);
  if (aligned(4)) return launchGatherRows<uint32_t>(dst, src, row_bytes, rows, count, stream);
  launchGatherRows<uint8_t>(dst, src, row_bytes, rows, count, stream);
}

}  // namespace synk::kernels
