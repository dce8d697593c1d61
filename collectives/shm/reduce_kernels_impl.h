#pragma once
// Private to collectives/shm: the reduction loops of the shared-memory collectives
// (shm_communicator.cc) and of a node's leader chaining a reduction across nodes
// (node_communicator.cc), the same loop so that both give the same bits.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include "synk/collectives/shm/owned_range.h"
#include "synk/core/dtype.h"
#include "synk/core/host_kernels.h"
#include "synk/core/reduce_op.h"

namespace synk::shm_detail {

// A block of every input is reduced into an accumulator that stays in L1, then stored into
// every output: each input and output byte crosses the memory bus once.
inline constexpr size_t kBlockBytes = 4096;
// The two-rank float all-reduce in one pass: a[i] = b[i] = (a[i] + b[i]) * scale. Reading both
// lines brings them into cache, so the stores cost no extra read-for-ownership.
template <bool kScale>
__attribute__((target_clones("avx512f", "avx2", "default"))) void sumPairInPlace(
    float* __restrict a, float* __restrict b, size_t count, float scale) {
  for (size_t i = 0; i < count; ++i) {
    float s = a[i] + b[i];
    if constexpr (kScale) s *= scale;
    a[i] = s;
    b[i] = s;
  }
}

// The same out of place (nccl-tests' first column group): x[i] = y[i] = (a[i] + b[i]) * scale.
template <bool kScale>
__attribute__((target_clones("avx512f", "avx2", "default"))) void sumPairOutOfPlace(
    const float* __restrict a, const float* __restrict b, float* __restrict x, float* __restrict y,
    size_t count, float scale) {
  for (size_t i = 0; i < count; ++i) {
    float s = a[i] + b[i];
    if constexpr (kScale) s *= scale;
    x[i] = s;
    y[i] = s;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) inline void addInto(
    float* __restrict acc, const float* __restrict x, size_t count) {
  for (size_t i = 0; i < count; ++i)
    acc[i] += x[i];
}

// Reduces elements [begin, end) of n input buffers with `op` and stores the result in each of m
// output buffers; an output may be one of the inputs. avg is the sum times 1/avg_ranks.
inline void reduceRange(const std::byte* const* in, int n, std::byte* const* out, int m,
                        size_t begin, size_t end, DType dtype, ReduceOp op, int avg_ranks) {
  if (begin >= end) return;
  const bool avg = op == ReduceOp::Avg;
  const double scale = 1.0 / avg_ranks;
  const size_t elem = dtypeSize(dtype);
  const bool float_sum = dtype == DType::Float32 && (op == ReduceOp::Sum || avg);
  if (float_sum && n == 2 && m == 2 && out[0] == in[0] && out[1] == in[1]) {
    auto* a = reinterpret_cast<float*>(out[0]) + begin;
    auto* b = reinterpret_cast<float*>(out[1]) + begin;
    if (avg) return sumPairInPlace<true>(a, b, end - begin, static_cast<float>(scale));
    return sumPairInPlace<false>(a, b, end - begin, 1.0f);
  }
  if (float_sum && n == 2 && m == 2 && out[0] != in[0] && out[0] != in[1] && out[1] != in[0] &&
      out[1] != in[1]) {
    const auto* a = reinterpret_cast<const float*>(in[0]) + begin;
    const auto* b = reinterpret_cast<const float*>(in[1]) + begin;
    auto* x = reinterpret_cast<float*>(out[0]) + begin;
    auto* y = reinterpret_cast<float*>(out[1]) + begin;
    if (avg) return sumPairOutOfPlace<true>(a, b, x, y, end - begin, static_cast<float>(scale));
    return sumPairOutOfPlace<false>(a, b, x, y, end - begin, 1.0f);
  }
  alignas(64) std::byte acc[kBlockBytes];
  const size_t per_block = kBlockBytes / elem;
  for (size_t i = begin; i < end; i += per_block) {
    const size_t len = std::min(per_block, end - i);
    const size_t offset = i * elem;
    const size_t bytes = len * elem;
    std::memcpy(acc, in[0] + offset, bytes);
    for (int k = 1; k < n; ++k) {
      if (float_sum) {
        addInto(reinterpret_cast<float*>(acc), reinterpret_cast<const float*>(in[k] + offset), len);
      } else {
        host::accumulate(acc, in[k] + offset, len, dtype, op);
      }
    }
    if (avg) host::scaleCopy(acc, acc, len, dtype, scale);
    for (int j = 0; j < m; ++j)
      std::memcpy(out[j] + offset, acc, bytes);
  }
}

}  // namespace synk::shm_detail
