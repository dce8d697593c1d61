#pragma once
// The harness's one random number generator: the bootstrap resamples with it (stats.h) and the
// runner fills a step's inputs with it (inputs.h).
#include <cstdint>

namespace synk::harness {

// A small deterministic generator (SplitMix64): the same seed gives the same stream on every
// platform, unlike std::uniform_int_distribution, so reported intervals are reproducible.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n), without modulo bias; n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [0, 1).
  double uniform();

 private:
  uint64_t state_;
};

}  // namespace synk::harness
