#pragma once
// The counter-based generator behind the initialisers: value i of stream `seed` is a function of
// (seed, i) alone, so the host and the GPU, any rank, in any order, produce the same numbers.
// Integer arithmetic only; the float results use one correctly rounded fma each, which the host
// (std::fma) and the GPU (__fmaf_rn) both compute exactly, so they agree bit for bit.
// constexpr so that CUDA code calls the same functions (--expt-relaxed-constexpr).
#include <cstdint>

namespace synk::compute::init_hash {

// splitmix64's finaliser over (seed, index).
constexpr uint64_t bits(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0xD1B54A32D192ED03ull + index * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// In [0, 1): the top 24 bits, exactly representable.
constexpr float unit(uint64_t seed, uint64_t index) {
  return static_cast<float>(bits(seed, index) >> 40) * (1.0f / 16777216.0f);
}

// Approximately standard normal: the Irwin-Hall sum of four 16-bit uniforms, centred and scaled
// to unit variance (|value| <= 3.46: a truncated normal, as initialisers want). Exact integer sum,
// one multiplication.
constexpr float normal(uint64_t seed, uint64_t index) {
  const uint64_t b = bits(seed, index);
  const int64_t total =
      static_cast<int64_t>((b & 0xffff) + ((b >> 16) & 0xffff) + ((b >> 32) & 0xffff) + (b >> 48));
  // Four uniforms on [0, 65536) have variance 4 * 65536^2 / 12; 1 / sqrt of it:
  constexpr float kScale = 2.6428998e-05f;  // sqrt(3) / 65536
  return static_cast<float>(total - 2 * 65535) * kScale;
}

}  // namespace synk::compute::init_hash
