// synk-bench history's change points: binary segmentation with Student's t on logs (p < 0.001,
// shift >= 5 %, at least 3 runs a segment) over synthetic histories whose steps are known.
#include "synk/harness/stats/change_points.h"

#include <catch2/catch.hpp>

#include "synk/core/error.h"
#include "tests/harness/noise.h"

using namespace synk::harness;
using synk::testing::Noise;

namespace {

// `count` commits at `level` with 1 % noise, then from each step's index on, level × factor.
struct Step {
  size_t at;
  double factor;
};
std::vector<double> history(uint64_t seed, size_t count, std::vector<Step> steps) {
  Noise noise(seed);
  std::vector<double> series = noise.around(1.0, 0.01, int(count));
  for (const Step& step : steps) {
    for (size_t i = step.at; i < count; ++i)
      series[i] *= step.factor;
  }
  return series;
}

std::vector<size_t> indices(const std::vector<ChangePoint>& found) {
  std::vector<size_t> out;
  for (const ChangePoint& c : found)
    out.push_back(c.index);
  return out;
}

}  // namespace

TEST_CASE("Student's t-test against closed forms of the t distribution", "[harness]") {
  // Two-sided p for 4 degrees of freedom: 1 - |t| (t^2 + 6) / (t^2 + 4)^(3/2); for 2:
  // 1 - |t| / sqrt(2 + t^2) (both checked by numeric integration of the density).
  // {1,2,3} vs {4,5,6}: pooled variance 1, t = -3 / sqrt(2/3), df 4: p = 0.0213116.
  CHECK(studentTTestP(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}) ==
        Approx(0.0213116411).epsilon(1e-8));
  // {1,2,3} vs {10,10,10}: pooled variance (2 + 0) / 4, t = -8 / sqrt(0.5 * 2/3), df 4.
  CHECK(studentTTestP(std::vector<double>{1, 2, 3}, std::vector<double>{10, 10, 10}) ==
        Approx(0.00015725977).epsilon(1e-7));
  // {0,2} vs {5,5}: pooled variance 1, t = -4, df 2: p = 1 - 4 / sqrt(18) = 0.0571910.
  CHECK(studentTTestP(std::vector<double>{0, 2}, std::vector<double>{5, 5}) ==
        Approx(0.0571909584).epsilon(1e-8));
  CHECK(studentTTestP(std::vector<double>{2, 2}, std::vector<double>{2, 2, 2}) == 1);
  CHECK(studentTTestP(std::vector<double>{2, 2}, std::vector<double>{3, 3, 3}) == 0);
  CHECK_THROWS_AS(studentTTestP(std::vector<double>{1}, std::vector<double>{1, 2}),
                  synk::InvalidArgument);
}

TEST_CASE("a history with one step: exactly that commit", "[harness]") {
  const std::vector<double> series = history(1, 30, {{17, 1.10}});
  const auto found = findChangePoints(series);
  REQUIRE(indices(found) == std::vector<size_t>{17});
  CHECK(found[0].shift == Approx(0.10).margin(0.02));
  CHECK(found[0].p < 0.001);
  CHECK(found[0].after > found[0].before);
}

TEST_CASE("a step in every seeded history is found where it is, and nothing else", "[harness]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const size_t at = 3 + seed % 24;  // anywhere a segment of 3 fits on both sides of 30
    INFO("seed " << seed << ", step at " << at);
    CHECK(indices(findChangePoints(history(seed, 30, {{at, 0.92}}))) == std::vector<size_t>{at});
  }
}

TEST_CASE("two lasting shifts: both, in order", "[harness]") {
  const auto found = findChangePoints(history(3, 40, {{10, 1.15}, {25, 1 / 1.15}}));
  CHECK(indices(found) == std::vector<size_t>{10, 25});
}

TEST_CASE("noise, a one-commit spike, a step too near either end: no change point", "[harness]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    CHECK(findChangePoints(history(seed, 40, {})).empty());
  }
  std::vector<double> spike = history(4, 30, {});
  spike[15] *= 1.30;
  CHECK(findChangePoints(spike).empty());
  // The last 2 commits moved: a segment needs 3, so it is not (yet) a lasting shift.
  CHECK(findChangePoints(history(5, 30, {{28, 1.2}})).empty());
  CHECK(findChangePoints(history(5, 30, {{2, 1.2}})).empty());
  // A 3 % step, however clear, is below the 5 % magnitude.
  CHECK(findChangePoints(history(6, 30, {{15, 1.03}}), {.min_shift = 0.05}).empty());
  CHECK(indices(findChangePoints(history(6, 30, {{15, 1.03}}), {.min_shift = 0.02})) ==
        std::vector<size_t>{15});
}

TEST_CASE("a noiseless step and bad values", "[harness]") {
  std::vector<double> flat(12, 2.0);
  for (size_t i = 5; i < flat.size(); ++i)
    flat[i] = 3.0;
  CHECK(indices(findChangePoints(flat)) == std::vector<size_t>{5});
  CHECK(findChangePoints(std::vector<double>(12, 2.0)).empty());
  CHECK(findChangePoints(std::vector<double>{}).empty());
  CHECK_THROWS_WITH(findChangePoints(std::vector<double>{1, 2, 0, 3}),
                    Catch::Contains("value 2 is 0"));
  CHECK_THROWS_AS(findChangePoints(flat, {.min_segment = 1}), synk::InvalidArgument);
}
