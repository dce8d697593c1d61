// What a median hides (harness/noise.h) on known cases, and the per-point spread and warnings
// a loaded run carries into its reports.
#include <catch2/catch.hpp>

#include "synk/harness/base/machine_load.h"
#include "synk/harness/stats/noise.h"

using namespace synk::harness;

TEST_CASE("noise: two groups of repetitions are found, one smooth spread is not", "[harness]") {
  // The case: repetitions split 0.8 ms / 2.6 ms and the table showed one median.
  const auto groups = findTwoGroups({0.80e-3, 2.61e-3, 0.81e-3, 2.58e-3, 0.79e-3});
  REQUIRE(groups);
  CHECK(groups->low_count == 3);
  CHECK(groups->high_count == 2);
  CHECK(groups->low_median == Approx(0.80e-3));
  CHECK(groups->high_median == Approx(2.595e-3));
  // A smooth, heavy-tailed spread has no gap wider than its groups.
  CHECK_FALSE(findTwoGroups({1.0, 1.1, 1.3, 1.8, 2.5}));
  // A 20 % step is noise, not two groups; too few values say nothing.
  CHECK_FALSE(findTwoGroups({1.0, 1.01, 1.2, 1.21}));
  CHECK_FALSE(findTwoGroups({1.0, 3.0, 3.0}));
  // One stray value is an outlier, not a group.
  CHECK_FALSE(findTwoGroups({1.0, 1.01, 0.99, 1.02, 3.0}));
}

TEST_CASE("noise: outliers by the modified z-score", "[harness]") {
  CHECK(findOutliers({1.0, 1.01, 0.99, 1.02, 3.0}) == std::vector<size_t>{4});
  CHECK(findOutliers({1.0, 1.01, 0.99, 1.02, 1.03}).empty());
  CHECK(findOutliers({1.0, 5.0, 1.0, 1.0}).empty());       // fewer than 5 values
  CHECK(findOutliers({1.0, 1.0, 1.0, 1.0, 9.0}).empty());  // MAD 0: cannot judge
  // Far out for a tight set, but 5 % from the median: not worth a warning.
  CHECK(findOutliers({1.0, 1.001, 0.999, 1.002, 1.05}).empty());
}

TEST_CASE("noise: the warnings name the groups, the outliers and the contention", "[harness]") {
  const auto two = noiseWarnings({0.8e-3, 0.8e-3, 0.8e-3, 2.6e-3, 2.6e-3}, std::nullopt, 1, 2);
  REQUIRE(two.size() == 1);
  CHECK_THAT(two[0], Catch::Contains("two groups, 800.0 us (3) and 2.60 ms (2)"));
  const auto stray = noiseWarnings({1e-3, 1.01e-3, 0.99e-3, 1.02e-3, 3e-3}, std::nullopt, 1, 2);
  REQUIRE(stray.size() == 1);
  CHECK_THAT(stray[0], Catch::Contains("1 outlier(s) (3.00 ms, median 1.01 ms)"));
  // 2 ranks on 2 CPUs while others kept 1.7 busy: contention. 1 rank beside 0.6: room enough.
  const auto loaded = noiseWarnings({1e-3, 1e-3, 1e-3}, 1.7, 2, 2);
  REQUIRE(loaded.size() == 1);
  CHECK_THAT(loaded[0], Catch::Contains("other processes kept 1.7 of 2 CPU(s) busy"));
  CHECK(noiseWarnings({1e-3, 1e-3, 1e-3}, 0.6, 1, 2).empty());
  CHECK(noiseWarnings({1e-3, 1e-3, 1e-3}, 0.4, 2, 2).empty());
}

TEST_CASE("machine load: other processes' CPU time between two readings", "[harness]") {
  CpuTimes before, after;
  before.valid = after.valid = true;
  before.busy_s = 100, before.ours_s = 10;
  after.busy_s = 103, after.ours_s = 11;  // 3 CPU-seconds busy, 1 of them ours
  after.at = before.at + std::chrono::seconds(2);
  REQUIRE(otherCpus(before, after));
  CHECK(*otherCpus(before, after) == Approx(1.0));
  after.busy_s = 100.5;  // coarse tick counts can put ours above the total: never below 0
  CHECK(*otherCpus(before, after) == 0);
  after.valid = false;
  CHECK_FALSE(otherCpus(before, after));
  // Real readings: valid, and others' use is finite and not negative.
  const CpuTimes a = cpuTimesNow(), b = cpuTimesNow();
  CHECK(a.valid);
  if (const auto others = otherCpus(a, b)) CHECK(*others >= 0);
}
