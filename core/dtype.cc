#include "core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace synk {
namespace {

struct DTypeInfo {
  const char* name;
  size_t size;
  bool floating;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"float32", 4, true}, {"float64", 8, true}, {"int32", 4, false},   {"int64", 8, false},
    {"uint8", 1, false},  {"float16", 2, true}, {"bfloat16", 2, true},
};

const DTypeInfo& info(DType dtype) {
  const auto raw = static_cast<int32_t>(dtype);
  if (!isValidDType(raw)) throw InvalidArgument(str("unknown dtype code ", raw));
  return kInfo[raw];
}

}  // namespace

bool isValidDType(int32_t raw) {
  return raw >= 0 && raw < kNumDTypes;
}
size_t dtypeSize(DType dtype) {
  return info(dtype).size;
}
const char* dtypeName(DType dtype) {
  return info(dtype).name;
}
bool isFloating(DType dtype) {
  return info(dtype).floating;
}

DType parseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) return static_cast<DType>(i);
  }
  std::string known;
  for (const auto& entry : kInfo)
    known += str(known.empty() ? "" : ", ", entry.name);
  throw InvalidArgument(str("unknown dtype '", name, "' (known: ", known, ")"));
}

bool canCastSafely(DType from, DType to) {
  using D = DType;
  if (from == to) return true;
  switch (from) {
    case D::UInt8:
      return to != D::UInt8;  // 0..255 is exact in every other type
    case D::Int32:
      return to == D::Int64 || to == D::Float64;
    case D::Int64:
      return to == D::Float64;
    case D::Float16:
    case D::BFloat16:
      return to == D::Float32 || to == D::Float64;
    case D::Float32:
      return to == D::Float64;
    case D::Float64:
      return false;
  }
  return false;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mantissa & 0x3ffu) << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;  // inf or nan
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t floatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan (keep nan quiet)
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to inf
  if (abs < 0x38800000u) {                        // subnormal half or zero
    const float magnitude = std::bit_cast<float>(abs);
    // Scale so the half subnormal unit (2^-24) becomes 1, then round to nearest even.
    const float scaled = magnitude * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  // Normal: rebias exponent, round mantissa from 23 to 10 bits (nearest even).
  uint32_t rebased = abs - ((127 - 15) << 23);
  const uint32_t round_bit = 1u << 12;
  const uint32_t lower = rebased & 0x1fffu;
  rebased >>= 13;
  if (lower > round_bit || (lower == round_bit && (rebased & 1u))) ++rebased;
  return sign | static_cast<uint16_t>(rebased);
}

float bfloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBFloat16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace synk
