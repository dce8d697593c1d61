// The deterministic initialisers: reproducible by (seed, index) whatever the pieces, the range
// and moments they promise, different streams for different seeds.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "synk/plugins/compute/init.h"

namespace synk::compute {
namespace {

TEST_CASE("uniform values depend on seed and index only", "[plugins][compute]") {
  const int64_t n = 100000;
  std::vector<float> whole(n), pieces(n), other(n);
  uniform(hostDevice(), whole.data(), n, {7, 0, -0.25f, 0.75f});
  uniform(hostDevice(), pieces.data(), 1234, {7, 0, -0.25f, 0.75f});
  uniform(hostDevice(), pieces.data() + 1234, n - 1234, {7, 1234, -0.25f, 0.75f});
  CHECK(whole == pieces);
  uniform(hostDevice(), other.data(), n, {8, 0, -0.25f, 0.75f});
  int64_t equal = 0;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    REQUIRE(whole[i] >= -0.25f);
    REQUIRE(whole[i] < 0.75f);
    equal += whole[i] == other[i];
    total += whole[i];
  }
  CHECK(equal < 100);
  CHECK(total / n == Approx(0.25).margin(0.005));
}

TEST_CASE("normal values have the asked mean and deviation and are truncated",
          "[plugins][compute]") {
  const int64_t n = 200000;
  std::vector<float> x(n);
  normal(hostDevice(), x.data(), n, {3, 0, 1.5f, 0.5f});
  double total = 0, squares = 0;
  for (float v : x) {
    REQUIRE(std::fabs(v - 1.5f) <= 0.5f * 3.47f);
    total += v;
    squares += double(v) * v;
  }
  const double mean = total / n;
  CHECK(mean == Approx(1.5).margin(0.005));
  CHECK(std::sqrt(squares / n - mean * mean) == Approx(0.5).epsilon(0.01));
}

}  // namespace
}  // namespace synk::compute
