#include "synk/core/host_kernels.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "synk/core/error.h"

namespace synk::host {
namespace {

// Arithmetic type used to compute with a storage type.
template <typename T>
using Compute =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
inline Compute<T> load(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return halfToFloat(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bfloat16ToFloat(v.bits);
  else
    return v;
}

template <typename T, typename V>
inline T store(V v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half{floatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16{floatToBFloat16(static_cast<float>(v))};
  else
    return static_cast<T>(v);
}

template <typename T, typename Op>
void accumulateLoop(T* __restrict acc, const T* __restrict x, size_t count, Op op) {
  for (size_t i = 0; i < count; ++i)
    acc[i] = store<T>(op(load(acc[i]), load(x[i])));
}

template <typename T>
void accumulateTyped(void* acc_raw, const void* x_raw, size_t count, ReduceOp op) {
  auto* acc = static_cast<T*>(acc_raw);
  const auto* x = static_cast<const T*>(x_raw);
  using C = Compute<T>;
  switch (op) {
    case ReduceOp::Avg:
    case ReduceOp::Sum:
      return accumulateLoop(acc, x, count, [](C a, C b) { return C(a + b); });
    case ReduceOp::Prod:
      return accumulateLoop(acc, x, count, [](C a, C b) { return C(a * b); });
    case ReduceOp::Max:
      return accumulateLoop(acc, x, count, [](C a, C b) { return std::max(a, b); });
    case ReduceOp::Min:
      return accumulateLoop(acc, x, count, [](C a, C b) { return std::min(a, b); });
    default:
      break;
  }
  throw InternalError(str("accumulate: op '", reduceOpName(op), "' is not element-wise"));
}

}  // namespace

void cast(const void* src, DType from, void* dst, DType to, size_t count) {
  if (from == to) {
    std::memmove(dst, src, count * dtypeSize(from));
    return;
  }
  visitDType(from, [&](auto src_tag) {
    using S = decltype(src_tag);
    visitDType(to, [&](auto dst_tag) {
      using D = decltype(dst_tag);
      const S* s = static_cast<const S*>(src);
      D* d = static_cast<D*>(dst);
      for (size_t i = 0; i < count; ++i) {
        if constexpr ((std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>)&&(
                          std::is_same_v<S, double> || std::is_same_v<S, int32_t> ||
                          std::is_same_v<S, int64_t>)) {
          // Wider than float: narrow to odd first, so the 16-bit rounding is the only one (an
          // int64 rounds to double first, harmless with 53 bits against 8 or 11 kept).
          d[i] = store<D>(doubleToFloatRoundToOdd(static_cast<double>(s[i])));
        } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
          d[i] = store<D>(static_cast<float>(load(s[i])));
        } else {
          d[i] = static_cast<D>(load(s[i]));
        }
      }
    });
  });
}

void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) {
  visitDType(dtype, [&](auto tag) { accumulateTyped<decltype(tag)>(acc, x, count, op); });
}

void scaleCopy(void* dst, const void* src, size_t count, DType dtype, double factor) {
  visitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    T* d = static_cast<T*>(dst);
    const T* s = static_cast<const T*>(src);
    const C f = static_cast<C>(factor);
    for (size_t i = 0; i < count; ++i)
      d[i] = store<T>(load(s[i]) * f);
  });
}

void fillIdentity(void* buf, size_t count, DType dtype, ReduceOp op) {
  visitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = Compute<T>;
    C value{};
    switch (op) {
      case ReduceOp::Prod:
        value = C(1);
        break;
      case ReduceOp::Max:
        value = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                     : std::numeric_limits<C>::lowest();
        break;
      case ReduceOp::Min:
        value = std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                     : std::numeric_limits<C>::max();
        break;
      default:
        value = C(0);
        break;
    }
    std::fill_n(static_cast<T*>(buf), count, store<T>(value));
  });
}

double loadAsDouble(const void* p, DType dtype) {
  return visitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(load(*static_cast<const T*>(p)));
  });
}

void storeFromDouble(void* p, DType dtype, double value) {
  visitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    *static_cast<T*>(p) = store<T>(value);
  });
}

}  // namespace synk::host
