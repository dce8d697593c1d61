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

#include "synk/core/element_types.h"
#include "synk/plugins/abi/synk_plugin.h"

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

// Storage of float16 and bfloat16 elements, their conversions and dtype codes: the host's own
// (core/element_types.h), so that a plugin rounds exactly as the host does.
using synk::BFloat16;
using synk::Half;

inline float toFloat(BFloat16 value) {
  return synk::bfloat16ToFloat(value.bits);
}
// Round to nearest even; NaN stays a (quiet) NaN.
inline BFloat16 toBFloat16(float value) {
  return {synk::floatToBFloat16(value)};
}
inline float toFloat(Half value) {
  return synk::halfToFloat(value.bits);
}
// Round to nearest even, overflow to infinity.
inline Half toHalf(float value) {
  return {synk::floatToHalf(value)};
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
  return static_cast<DType>(synk::dtypeCode<T>());
}
static_assert(dtypeOf<float>() == DType::Float32 && dtypeOf<double>() == DType::Float64 &&
                  dtypeOf<int32_t>() == DType::Int32 && dtypeOf<int64_t>() == DType::Int64 &&
                  dtypeOf<uint8_t>() == DType::UInt8 && dtypeOf<Half>() == DType::Float16 &&
                  dtypeOf<BFloat16>() == DType::BFloat16,
              "core/element_types.h's codes are the ABI's SYNK_DTYPE_* values");

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
