#pragma once
// Seeded synthetic measurements for the statistics tests: a level times log-normal noise, the
// shape step times take (multiplicative, never negative).
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace synk::testing {

class Noise {
 public:
  explicit Noise(uint64_t seed) : rng_(seed) {}
  // `count` values around `level`, each times exp(sigma × N(0, 1)): sigma is about the
  // relative standard deviation.
  std::vector<double> around(double level, double sigma, int count) {
    std::vector<double> values(size_t(count), 0.0);
    for (double& v : values)
      v = level * std::exp(sigma * normal_(rng_));
    return values;
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_;
};

}  // namespace synk::testing
