#pragma once
// Element types of Data, shared variables and function inputs/outputs. The numeric values are
// part of the plugin ABI (plugins/abi/synk_plugin.h, SYNK_DTYPE_*): never renumber.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "synk/core/element_types.h"

namespace synk {

enum class DType : int32_t {
  Float32 = 0,
  Float64 = 1,
  Int32 = 2,
  Int64 = 3,
  UInt8 = 4,
  Float16 = 5,
  BFloat16 = 6,
};
inline constexpr int kNumDTypes = 7;

size_t dtypeSize(DType dtype);
const char* dtypeName(DType dtype);
// Accepts the names dtypeName prints ("float32", "int64", ...); throws InvalidArgument otherwise.
DType parseDType(std::string_view name);
bool isValidDType(int32_t raw);
bool isFloating(DType dtype);
// numpy's 'safe' casting: every value of `from` is represented in `to` (int64 -> float64 counts,
// as in numpy). Used by Data::setValue without force_cast.
bool canCastSafely(DType from, DType to);

// The element types (Half, BFloat16), their conversions to and from float
// (halfToFloat, floatToHalf, bfloat16ToFloat, floatToBFloat16) and the dtype of a C++ type are in
// core/element_types.h, which the plugin SDK shares.
template <typename T>
constexpr DType dtypeOf() {
  return static_cast<DType>(dtypeCode<T>());
}

// Calls fn(T{}) with the C++ storage type of dtype (Half, BFloat16 for the 16-bit floats).
template <typename Fn>
decltype(auto) visitDType(DType dtype, Fn&& fn);

}  // namespace synk

#include "synk/core/dtype_visit_impl.h"
