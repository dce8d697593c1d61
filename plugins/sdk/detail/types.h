#pragma once
// SDK value types: status and error, dtypes (codes of the ABI), float16/bfloat16 storage types.
// Part of plugins/sdk/synk_sdk.h; include that instead.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "plugins/abi/synk_plugin.h"

namespace synk::sdk {

enum class Status : int32_t {
  Ok = SYNK_OK,
  InvalidArgument = SYNK_ERROR_INVALID_ARGUMENT,
  Unsupported = SYNK_ERROR_UNSUPPORTED,
  OutOfMemory = SYNK_ERROR_OUT_OF_MEMORY,
  Device = SYNK_ERROR_DEVICE,
  Internal = SYNK_ERROR_INTERNAL,
};

// Throw this from a model to choose the status the host sees; any other exception becomes
// Status::Internal (std::bad_alloc: OutOfMemory) with its what() as the message.
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

enum class DType : int32_t {
  Float32 = SYNK_DTYPE_FLOAT32,
  Float64 = SYNK_DTYPE_FLOAT64,
  Int32 = SYNK_DTYPE_INT32,
  Int64 = SYNK_DTYPE_INT64,
  UInt8 = SYNK_DTYPE_UINT8,
  Float16 = SYNK_DTYPE_FLOAT16,
  BFloat16 = SYNK_DTYPE_BFLOAT16,
};

enum class DeviceKind : int32_t { Host = SYNK_DEVICE_HOST, Cuda = SYNK_DEVICE_CUDA };
enum class VariableKind : int32_t {
  Plain = SYNK_VARIABLE_PLAIN,
  Mirrored = SYNK_VARIABLE_MIRRORED,
  RankLocal = SYNK_VARIABLE_RANK_LOCAL,
};
enum class Reduction : int32_t { Sum = SYNK_REDUCTION_SUM, Mean = SYNK_REDUCTION_MEAN };
// Context::allReduce's op (ABI 1.2). Avg weighs every rank the same.
enum class ReduceOp : int32_t {
  Sum = SYNK_REDUCE_SUM,
  Avg = SYNK_REDUCE_AVG,
  Max = SYNK_REDUCE_MAX,
  Min = SYNK_REDUCE_MIN,
};
enum class LogLevel : int32_t {
  Debug = SYNK_LOG_DEBUG,
  Info = SYNK_LOG_INFO,
  Warning = SYNK_LOG_WARNING,
  Error = SYNK_LOG_ERROR,
};

using Shape = std::vector<int64_t>;

// Storage of float16 and bfloat16 elements: the bits, so templates tell them from integers.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

namespace detail {
inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
}  // namespace detail

inline float toFloat(BFloat16 value) {
  return detail::bitsFloat(uint32_t{value.bits} << 16);
}

// Round to nearest even; NaN stays a (quiet) NaN.
inline BFloat16 toBFloat16(float value) {
  const uint32_t bits = detail::floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((bits >> 16) | 0x40u)};
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return {static_cast<uint16_t>((bits + rounding) >> 16)};
}

inline float toFloat(Half value) {
  const uint32_t h = value.bits;
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return detail::bitsFloat(sign | 0x7f800000u | mantissa << 13);
  return detail::bitsFloat(sign | (exponent + 127 - 15) << 23 | mantissa << 13);
}

// Round to nearest even, overflow to infinity.
inline Half toHalf(float value) {
  const uint32_t bits = detail::floatBits(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {
    return {static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  }
  if (abs >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};
  if (abs < 0x38800000u) {  // half subnormal or zero: count units of 2^-24
    const float units = detail::bitsFloat(abs) * 16777216.0f;
    return {static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)))};
  }
  uint32_t rebased = abs - ((127u - 15u) << 23);
  const uint32_t lower = rebased & 0x1fffu;
  rebased >>= 13;
  if (lower > 0x1000u || (lower == 0x1000u && (rebased & 1u))) ++rebased;
  return {static_cast<uint16_t>(sign | rebased)};
}

inline size_t dtypeSize(DType dtype) {
  switch (dtype) {
    case DType::Float64:
    case DType::Int64:
      return 8;
    case DType::Float32:
    case DType::Int32:
      return 4;
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::UInt8:
      return 1;
  }
  throw Error(Status::InvalidArgument,
              "unknown dtype code " + std::to_string(static_cast<int32_t>(dtype)));
}

inline const char* dtypeName(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::UInt8:
      return "uint8";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
  }
  return "unknown";
}

template <typename T>
constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DType::Float32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::Float64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::Int64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::UInt8;
  else if constexpr (std::is_same_v<T, Half>)
    return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::BFloat16;
  else
    static_assert(sizeof(T) == 0, "not a synk element type");
}

// The bytes of values (a list, or a pointer and a count), for Variable::initial.
template <typename T>
std::vector<std::byte> bytesOf(const T* values, size_t count) {
  std::vector<std::byte> bytes(count * sizeof(T));
  if (count) std::memcpy(bytes.data(), values, bytes.size());
  return bytes;
}
template <typename T>
std::vector<std::byte> bytesOf(std::initializer_list<T> values) {
  return bytesOf(values.begin(), values.size());
}

inline std::string shapeString(const int64_t* dims, int ndim) {
  std::string out = "(";
  for (int i = 0; i < ndim; ++i)
    out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + (ndim == 1 ? ",)" : ")");
}

}  // namespace synk::sdk
