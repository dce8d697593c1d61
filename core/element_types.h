#pragma once
// The element types the host and plugins agree on, written once: the float16/bfloat16 storage
// types, their conversions to and from float, and which dtype code a C++ type has. core/dtype.h
// (the host) and the plugin SDK (plugins/sdk/detail/types.h) both build on this header, so their
// rounding and their codes cannot drift apart. It depends on the standard library only and
// compiles as C++17 (plugins compile against the SDK with C++17).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace synk {

// Storage of float16 and bfloat16 elements: the bits, so that templates tell them from integers.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

namespace element_detail {
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
}  // namespace element_detail

// IEEE binary16 to float: exact (a subnormal is its mantissa times 2^-24).
inline float halfToFloat(uint16_t h) {
  using element_detail::bitsFloat;
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | mantissa << 13);  // inf or nan
  return bitsFloat(sign | (exponent + 127 - 15) << 23 | mantissa << 13);
}

// Float to IEEE binary16: round to nearest even, overflow to infinity, NaN stays a quiet NaN.
inline uint16_t floatToHalf(float value) {
  const uint32_t bits = element_detail::floatBits(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Subnormal half or zero: count units of 2^-24, rounded to nearest even.
    const float units = element_detail::bitsFloat(abs) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)));
  }
  // Normal: rebias the exponent, round the mantissa from 23 to 10 bits.
  uint32_t rebased = abs - ((127u - 15u) << 23);
  const uint32_t lower = rebased & 0x1fffu;
  rebased >>= 13;
  if (lower > 0x1000u || (lower == 0x1000u && (rebased & 1u))) ++rebased;
  return static_cast<uint16_t>(sign | rebased);
}

inline float bfloat16ToFloat(uint16_t bits) {
  return element_detail::bitsFloat(uint32_t{bits} << 16);
}

// Float to bfloat16: round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t floatToBFloat16(float value) {
  const uint32_t bits = element_detail::floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// Double to float, rounding to odd: toward zero, then the last bit set if anything was lost. A
// value narrowed so and then rounded to nearest float16 or bfloat16 is rounded once, as the exact
// value would be (float keeps 24 bits, at least 2 more than twice either 16-bit type's); narrowing
// by round-to-nearest first could round twice at a tie (1 + 2^-11 + 2^-40 -> float16 1, not 1 +
// 2^-10).
inline float doubleToFloatRoundToOdd(double value) {
  float narrowed = static_cast<float>(value);  // to nearest
  if (std::isnan(value) || std::isinf(narrowed) || static_cast<double>(narrowed) == value) {
    return narrowed;  // exact, NaN, or beyond float's range (both 16-bit types overflow there too)
  }
  uint32_t bits = element_detail::floatBits(narrowed);
  if (std::fabs(static_cast<double>(narrowed)) > std::fabs(value)) --bits;  // back toward zero
  return element_detail::bitsFloat(bits | 1u);
}

// The dtype code of an element type: the plugin ABI's SYNK_DTYPE_* numbers, which are core's
// DType values too (each side's dtypeOf<T>() casts this to its enum).
template <typename T>
constexpr int32_t dtypeCode() {
  if constexpr (std::is_same_v<T, float>)
    return 0;
  else if constexpr (std::is_same_v<T, double>)
    return 1;
  else if constexpr (std::is_same_v<T, int32_t>)
    return 2;
  else if constexpr (std::is_same_v<T, int64_t>)
    return 3;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return 4;
  else if constexpr (std::is_same_v<T, Half>)
    return 5;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 6;
  else
    static_assert(sizeof(T) == 0, "not a synk element type");
}

}  // namespace synk
