#pragma once
// Element types of Data, shared variables and function inputs/outputs. The numeric values are
// part of the plugin ABI (plugins/abi/synk_plugin.h, SYNK_DTYPE_*): never renumber.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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

// IEEE binary16 and bfloat16 conversions, round-to-nearest-even.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);

// Calls fn(T{}) with the C++ storage type of dtype. float16/bfloat16 are stored as uint16_t
// wrappers (Half, BFloat16) so templates can tell them apart from integers.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename Fn>
decltype(auto) visitDType(DType dtype, Fn&& fn);

}  // namespace synk

#include "core/dtype_visit_impl.h"
