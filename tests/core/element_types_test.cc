// core/element_types.h and core/dtype.h without a session: float16 and bfloat16 rounding (to
// nearest even, NaN, infinities, subnormals, overflow), every 16-bit value's round trip, the dtype
// table and numpy's safe casts, and host::cast between dtypes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "synk/core/dtype.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"

namespace synk {
namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
bool isHalfNan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}
bool isBFloat16Nan(uint16_t b) {
  return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
}

const float kInf = std::numeric_limits<float>::infinity();

TEST_CASE("halfToFloat: normals, subnormals, zeros, infinities and NaN", "[core]") {
  CHECK(halfToFloat(0x3c00) == 1.0f);
  CHECK(halfToFloat(0xc000) == -2.0f);
  CHECK(halfToFloat(0x3555) == 0.333251953125f);
  CHECK(halfToFloat(0x7bff) == 65504.0f);               // the largest float16
  CHECK(halfToFloat(0x0400) == std::ldexp(1.0f, -14));  // the smallest normal
  CHECK(halfToFloat(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(halfToFloat(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(halfToFloat(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(bitsOf(halfToFloat(0x8000)) == 0x80000000u);  // -0 keeps its sign
  CHECK(halfToFloat(0x7c00) == kInf);
  CHECK(halfToFloat(0xfc00) == -kInf);
  CHECK(std::isnan(halfToFloat(0x7e00)));
  CHECK(std::isnan(halfToFloat(0x7c01)));  // a signalling payload is still a NaN
}

TEST_CASE("floatToHalf rounds to nearest, ties to even", "[core]") {
  const float ulp = std::ldexp(1.0f, -10);  // float16's spacing in [1, 2)
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(1.0f + ulp / 2) == 0x3c00);      // tie: 0x3c00 is even
  CHECK(floatToHalf(1.0f + 3 * ulp / 2) == 0x3c02);  // tie: 0x3c01 is odd, up to 0x3c02
  CHECK(floatToHalf(1.0f + ulp / 2 + std::ldexp(1.0f, -20)) == 0x3c01);  // past the tie
  CHECK(floatToHalf(1.0f + ulp / 2 - std::ldexp(1.0f, -20)) == 0x3c00);  // short of it
  CHECK(floatToHalf(-1.0f - 3 * ulp / 2) == 0xbc02);                     // symmetric
  // A carry out of the mantissa moves to the next exponent: just under 2 rounds to 2.
  CHECK(floatToHalf(2.0f - std::ldexp(1.0f, -12)) == 0x4000);
}

TEST_CASE("floatToHalf: overflow to infinity, subnormals, NaN", "[core]") {
  SECTION("overflow") {
    CHECK(floatToHalf(65504.0f) == 0x7bff);
    CHECK(floatToHalf(65519.0f) == 0x7bff);  // under the tie with 65536
    CHECK(floatToHalf(65520.0f) == 0x7c00);  // the tie goes to the even side: infinity
    CHECK(floatToHalf(1e6f) == 0x7c00);
    CHECK(floatToHalf(-1e6f) == 0xfc00);
    CHECK(floatToHalf(std::numeric_limits<float>::max()) == 0x7c00);
    CHECK(floatToHalf(kInf) == 0x7c00);
    CHECK(floatToHalf(-kInf) == 0xfc00);
  }
  SECTION("subnormals and underflow") {
    const float unit = std::ldexp(1.0f, -24);
    CHECK(floatToHalf(unit) == 0x0001);
    CHECK(floatToHalf(unit / 2) == 0x0000);      // tie with 0: even
    CHECK(floatToHalf(3 * unit / 2) == 0x0002);  // tie between 1 and 2 units: even
    CHECK(floatToHalf(unit * 0.51f) == 0x0001);
    CHECK(floatToHalf(-unit) == 0x8001);
    CHECK(floatToHalf(1e-10f) == 0x0000);
    CHECK(floatToHalf(-1e-10f) == 0x8000);  // underflow keeps the sign
    CHECK(floatToHalf(std::ldexp(1023.0f, -24)) == 0x03ff);
    // Halfway between the largest subnormal and the smallest normal: up to the (even) normal.
    CHECK(floatToHalf(std::ldexp(1023.5f, -24)) == 0x0400);
    CHECK(floatToHalf(std::numeric_limits<float>::denorm_min()) == 0x0000);
  }
  SECTION("NaN stays a quiet NaN of its sign") {
    const uint16_t quiet = floatToHalf(std::numeric_limits<float>::quiet_NaN());
    CHECK(isHalfNan(quiet));
    CHECK((quiet & 0x200u) != 0);
    // A payload only in the low bits (lost by the shift) must not turn into infinity.
    const uint16_t low_payload = floatToHalf(fromBits(0x7f800001u));
    CHECK(isHalfNan(low_payload));
    CHECK(isHalfNan(floatToHalf(fromBits(0xffc00000u))));
    CHECK((floatToHalf(fromBits(0xffc00000u)) & 0x8000u) != 0);
  }
}

TEST_CASE("every float16 value survives float and back, bit for bit", "[core]") {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const uint16_t back = floatToHalf(halfToFloat(bits));
    if (isHalfNan(bits)) {
      if (!isHalfNan(back) || (back & 0x8000u) != (bits & 0x8000u)) FAIL("NaN " << h);
    } else if (back != bits) {
      FAIL("float16 0x" << std::hex << h << " came back as 0x" << back);
    }
  }
}

#ifdef __FLT16_MAX__
TEST_CASE("floatToHalf agrees with the compiler's _Float16 on a sweep of floats", "[core]") {
  int checked = 0, wrong = 0;
  auto agree = [&](uint64_t bits, uint64_t end, uint64_t stride) {
    for (; bits < end; bits += stride) {
      const float value = fromBits(static_cast<uint32_t>(bits));
      if (std::isnan(value)) continue;
      const _Float16 reference = static_cast<_Float16>(value);
      uint16_t expected;
      std::memcpy(&expected, &reference, sizeof expected);
      ++checked;
      if (floatToHalf(value) != expected && ++wrong <= 5) {
        FAIL_CHECK("floatToHalf(" << value << ") = 0x" << std::hex << floatToHalf(value)
                                  << ", expected 0x" << expected);
      }
    }
  };
  agree(0, uint64_t{1} << 32, 4093);    // both signs, every exponent
  agree(0x477f0000u, 0x47810000u, 1);   // every float around the overflow to infinity
  agree(0x38000000u, 0x38900000u, 17);  // around the smallest normal
  agree(0x33000000u, 0x33900000u, 17);  // around the smallest subnormal
  CHECK(wrong == 0);
  CHECK(checked > 1500000);
}
#endif

// bfloat16 by an independent route: round the float to 8 significant bits (7 stored) with the
// default rounding mode (to nearest even), or to multiples of 2^-133 where floats are subnormal.
uint16_t referenceBFloat16(float value) {
  double rounded;
  if (std::fabs(value) < std::numeric_limits<float>::min()) {
    rounded = std::nearbyint(std::ldexp(static_cast<double>(value), 133)) * std::ldexp(1.0, -133);
  } else {
    int exponent;
    const double mantissa = std::frexp(static_cast<double>(value), &exponent);
    rounded = std::ldexp(std::nearbyint(std::ldexp(mantissa, 8)), exponent - 8);
  }
  const float narrowed = rounded > std::numeric_limits<float>::max() ? kInf
                         : rounded < -std::numeric_limits<float>::max()
                             ? -kInf
                             : static_cast<float>(rounded);
  return static_cast<uint16_t>(bitsOf(narrowed) >> 16);
}

TEST_CASE("floatToBFloat16: ties to even, overflow, NaN, every value round-trips", "[core]") {
  CHECK(floatToBFloat16(1.0f) == 0x3f80);
  CHECK(floatToBFloat16(fromBits(0x3f808000u)) == 0x3f80);  // tie, 0x3f80 even
  CHECK(floatToBFloat16(fromBits(0x3f818000u)) == 0x3f82);  // tie, 0x3f81 odd
  CHECK(floatToBFloat16(fromBits(0x3f808001u)) == 0x3f81);  // past the tie
  CHECK(floatToBFloat16(fromBits(0x3f807fffu)) == 0x3f80);
  CHECK(floatToBFloat16(std::numeric_limits<float>::max()) == 0x7f80);  // overflows to inf
  CHECK(floatToBFloat16(-kInf) == 0xff80);
  CHECK(floatToBFloat16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(floatToBFloat16(fromBits(0x00008000u)) == 0x0000);  // subnormal tie: even
  CHECK(floatToBFloat16(fromBits(0x00018000u)) == 0x0002);
  // A NaN whose payload sits in the dropped half must stay a NaN, not become infinity.
  CHECK(isBFloat16Nan(floatToBFloat16(fromBits(0x7f800001u))));
  CHECK(isBFloat16Nan(floatToBFloat16(fromBits(0xff800001u))));
  CHECK((floatToBFloat16(fromBits(0xff800001u)) & 0x8000u) != 0);
  CHECK(bfloat16ToFloat(0x3f80) == 1.0f);
  CHECK(bfloat16ToFloat(0xc0a0) == -5.0f);

  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const uint16_t back = floatToBFloat16(bfloat16ToFloat(bits));
    if (isBFloat16Nan(bits) ? !isBFloat16Nan(back) : back != bits) FAIL("bfloat16 " << b);
  }
  int checked = 0;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 2039) {
    const float value = fromBits(static_cast<uint32_t>(bits));
    if (std::isnan(value)) continue;
    if (floatToBFloat16(value) != referenceBFloat16(value)) {
      FAIL("floatToBFloat16 of bits 0x" << std::hex << bits << ": 0x" << floatToBFloat16(value)
                                        << ", expected 0x" << referenceBFloat16(value));
    }
    ++checked;
  }
  CHECK(checked > 2000000);
}

TEST_CASE("the dtype table: sizes, names, codes, floating", "[core]") {
  const std::vector<std::tuple<DType, const char*, size_t, bool>> table = {
      {DType::Float32, "float32", 4, true},   {DType::Float64, "float64", 8, true},
      {DType::Int32, "int32", 4, false},      {DType::Int64, "int64", 8, false},
      {DType::UInt8, "uint8", 1, false},      {DType::Float16, "float16", 2, true},
      {DType::BFloat16, "bfloat16", 2, true},
  };
  REQUIRE(table.size() == kNumDTypes);
  for (const auto& [dtype, name, size, floating] : table) {
    CHECK(std::string(dtypeName(dtype)) == name);
    CHECK(dtypeSize(dtype) == size);
    CHECK(isFloating(dtype) == floating);
    CHECK(parseDType(name) == dtype);
  }
  CHECK(dtypeOf<float>() == DType::Float32);
  CHECK(dtypeOf<double>() == DType::Float64);
  CHECK(dtypeOf<int32_t>() == DType::Int32);
  CHECK(dtypeOf<int64_t>() == DType::Int64);
  CHECK(dtypeOf<uint8_t>() == DType::UInt8);
  CHECK(dtypeOf<Half>() == DType::Float16);
  CHECK(dtypeOf<BFloat16>() == DType::BFloat16);
  CHECK_FALSE(isValidDType(-1));
  CHECK_FALSE(isValidDType(kNumDTypes));
  CHECK_THROWS_WITH(parseDType("float8"),
                    "unknown dtype 'float8' (known: float32, float64, int32, int64, uint8, "
                    "float16, bfloat16)");
  CHECK_THROWS_WITH(dtypeSize(static_cast<DType>(9)), "unknown dtype code 9");
}

TEST_CASE("canCastSafely follows numpy's safe casting", "[core]") {
  using D = DType;
  const std::vector<D> all = {D::Float32, D::Float64, D::Int32,   D::Int64,
                              D::UInt8,   D::Float16, D::BFloat16};
  // to:            f32 f64 i32 i64 u8 f16 bf16
  const int safe[7][7] = {
      {1, 1, 0, 0, 0, 0, 0},  // float32
      {0, 1, 0, 0, 0, 0, 0},  // float64
      {0, 1, 1, 1, 0, 0, 0},  // int32
      {0, 1, 0, 1, 0, 0, 0},  // int64 (to float64 counts, as in numpy)
      {1, 1, 1, 1, 1, 1, 1},  // uint8
      {1, 1, 0, 0, 0, 1, 0},  // float16
      {1, 1, 0, 0, 0, 0, 1},  // bfloat16
  };
  for (size_t from = 0; from < all.size(); ++from) {
    for (size_t to = 0; to < all.size(); ++to) {
      INFO(dtypeName(all[from]) << " -> " << dtypeName(all[to]));
      CHECK(canCastSafely(all[from], all[to]) == (safe[from][to] == 1));
    }
  }
}

TEST_CASE("host::cast converts between dtypes, rounding once", "[core]") {
  SECTION("float64 and integers to float16 and bfloat16 round once, at ties too") {
    // Narrowed to nearest float first, 1 + 2^-11 + 2^-40 became the tie 1 + 2^-11 and went to 1.
    const std::vector<double> ties = {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                      -(1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
                                      1 + std::ldexp(1.0, -11),
                                      65519.99999999,
                                      1e-300,
                                      1e300};
    std::vector<Half> half(ties.size());
    host::cast(ties.data(), DType::Float64, half.data(), DType::Float16, ties.size());
    CHECK(half[0].bits == 0x3c01);
    CHECK(half[1].bits == 0xbc01);
    CHECK(half[2].bits == 0x3c00);  // an exact tie: to even
    CHECK(half[3].bits == 0x7bff);  // just below the overflow threshold
    CHECK(half[4].bits == 0x0000);
    CHECK(half[5].bits == 0x7c00);
    const std::vector<int32_t> ints = {(1 << 30) + (1 << 22) + 1, (1 << 30) + (1 << 22)};
    std::vector<BFloat16> bf(ints.size());
    host::cast(ints.data(), DType::Int32, bf.data(), DType::BFloat16, ints.size());
    CHECK(bf[0].bits == 0x4e81);  // past the tie: up
    CHECK(bf[1].bits == 0x4e80);  // the tie: to even
    // Against the compiler's single rounding of double to _Float16 at every float16 tie in
    // [1, 2) (a half ulp, 2^-11, past each 11-bit mantissa) and a hair to either side of it.
    int wrong = 0;
    for (int m = 0; m < 1024 && wrong < 5; ++m) {
      for (const double nudge : {0.0, std::ldexp(1.0, -40), -std::ldexp(1.0, -40),
                                 std::ldexp(1.0, -30), -std::ldexp(1.0, -30)}) {
        const double value = 1 + (m + 0.5) / 1024.0 + nudge;
        Half out;
        host::cast(&value, DType::Float64, &out, DType::Float16, 1);
        const _Float16 reference = static_cast<_Float16>(value);
        uint16_t expected;
        std::memcpy(&expected, &reference, sizeof expected);
        if (out.bits != expected && ++wrong <= 5) {
          FAIL_CHECK("cast(" << value << ") = 0x" << std::hex << out.bits << ", expected 0x"
                             << expected);
        }
      }
    }
  }
  SECTION("float32 to float16 and bfloat16: the same rounding as the scalar conversions") {
    const std::vector<float> in = {1.0f, 1.0f + std::ldexp(1.0f, -11), 65520.0f, -3.5f, 1e-8f};
    std::vector<Half> half(in.size());
    std::vector<BFloat16> bf(in.size());
    host::cast(in.data(), DType::Float32, half.data(), DType::Float16, in.size());
    host::cast(in.data(), DType::Float32, bf.data(), DType::BFloat16, in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      CHECK(half[i].bits == floatToHalf(in[i]));
      CHECK(bf[i].bits == floatToBFloat16(in[i]));
    }
    CHECK(half[2].bits == 0x7c00);  // 65520 overflows
  }
  SECTION("float16 to bfloat16 and back goes through float") {
    const std::vector<Half> in = {{0x3c00}, {0x3c01}, {0x7c00}, {0x0001}};
    std::vector<BFloat16> bf(in.size());
    host::cast(in.data(), DType::Float16, bf.data(), DType::BFloat16, in.size());
    CHECK(bf[0].bits == 0x3f80);
    CHECK(bf[1].bits == floatToBFloat16(halfToFloat(0x3c01)));  // 1 + 2^-10 rounds to 1
    CHECK(bf[1].bits == 0x3f80);
    CHECK(bf[2].bits == 0x7f80);
    CHECK(bfloat16ToFloat(bf[3].bits) == std::ldexp(1.0f, -24));  // exact: bfloat16 has the range
  }
  SECTION("integers and floats") {
    const std::vector<double> in = {2.75, -2.75, 255.0, 1e10};
    std::vector<int32_t> ints(in.size());
    host::cast(in.data(), DType::Float64, ints.data(), DType::Int32, 3);
    CHECK(ints[0] == 2);  // C++ conversion: toward zero
    CHECK(ints[1] == -2);
    CHECK(ints[2] == 255);
    const std::vector<int64_t> big = {(int64_t{1} << 53) + 1, -7};
    std::vector<double> wide(big.size());
    host::cast(big.data(), DType::Int64, wide.data(), DType::Float64, big.size());
    CHECK(wide[0] == std::ldexp(1.0, 53));  // not exact past 2^53, as in numpy
    CHECK(wide[1] == -7.0);
    const std::vector<uint8_t> bytes = {0, 200, 255};
    std::vector<Half> half(bytes.size());
    host::cast(bytes.data(), DType::UInt8, half.data(), DType::Float16, bytes.size());
    CHECK(halfToFloat(half[1].bits) == 200.0f);
    CHECK(halfToFloat(half[2].bits) == 255.0f);
  }
  SECTION("the same dtype is a copy, overlapping allowed") {
    std::vector<int32_t> values = {1, 2, 3, 4};
    host::cast(values.data(), DType::Int32, values.data() + 1, DType::Int32, 3);
    CHECK(values == std::vector<int32_t>{1, 1, 2, 3});
  }
}

}  // namespace
}  // namespace synk
