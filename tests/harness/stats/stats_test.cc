// harness/stats.h against cases computed by hand.
#include <catch2/catch.hpp>
#include <map>

#include "synk/harness/stats/stats.h"
#include "tests/harness/noise.h"

using namespace synk::harness;

TEST_CASE("median and percentiles by hand", "[harness]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({}) == 0);
  CHECK(median({7}) == 7);
  // numpy.percentile([1, 2, 3, 4], q) with linear interpolation: 1.75, 2.5, 3.25, 4
  CHECK(percentile({4, 3, 2, 1}, 25) == Approx(1.75));
  CHECK(percentile({4, 3, 2, 1}, 50) == Approx(2.5));
  CHECK(percentile({4, 3, 2, 1}, 75) == Approx(3.25));
  CHECK(percentile({4, 3, 2, 1}, 100) == 4);
  CHECK(percentile({4, 3, 2, 1}, 0) == 1);
  CHECK(percentile({1, 2}, 150) == 2);  // clamped
}

TEST_CASE("summarize: quartiles, mean and the sample standard deviation", "[harness]") {
  // 2 4 4 4 5 5 7 9: mean 5, squares 32, sample variance 32/7.
  const Summary s = summarize({9, 2, 4, 4, 5, 4, 5, 7});
  CHECK(s.n == 8);
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.mean == 5);
  CHECK(s.median == 4.5);
  CHECK(s.q1 == 4);            // position 1.75 between 4 and 4
  CHECK(s.q3 == Approx(5.5));  // position 5.25: 5 + 0.25 * (7 - 5)
  CHECK(s.stdev == Approx(std::sqrt(32.0 / 7)));
  CHECK(summarize({}).n == 0);
  CHECK(summarize({3}).stdev == 0);
}

TEST_CASE("Rng: the same seed gives the same stream, and below(n) is uniform", "[harness]") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i)
    CHECK(a.next() == b.next());
  CHECK(Rng(42).next() != c.next());
  // SplitMix64's first output for seed 0 (Vigna's reference implementation).
  CHECK(Rng(0).next() == 0xe220a8397b1dcdafULL);
  std::map<uint64_t, int> counts;
  Rng r(7);
  for (int i = 0; i < 70000; ++i)
    ++counts[r.below(7)];
  REQUIRE(counts.size() == 7);
  for (const auto& [value, count] : counts) {
    CHECK(value < 7);
    CHECK(count == Approx(10000).margin(500));  // ~5 sigma of a binomial(70000, 1/7)
  }
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform();
    CHECK((u >= 0 && u < 1));
  }
}

TEST_CASE("bootstrap interval of a ratio of medians, by hand", "[harness]") {
  SECTION("constant groups give the exact ratio") {
    const auto ci = bootstrapRatioOfMedians({2, 2, 2}, {4, 4, 4, 4});
    REQUIRE(ci);
    CHECK(ci->low == 0.5);
    CHECK(ci->high == 0.5);
  }
  SECTION("{1, 2, 3} / {1}: resampled medians are 1, 2, 3 with probabilities 7, 13, 7 / 27") {
    // P(median = 1) = P(at least two 1s of three draws) = 7/27 > 2.5 %, likewise for 3, so the
    // 95 % interval spans [1, 3]; the 25th and 75th percentiles are 1 and 3 too (7/27 > 25 %).
    BootstrapOptions options;
    options.resamples = 4000;
    const auto ci = bootstrapRatioOfMedians({1, 2, 3}, {1}, options);
    REQUIRE(ci);
    CHECK(ci->low == 1);
    CHECK(ci->high == 3);
    options.confidence = 0.40;  // the 30th .. 70th percentiles: both fall on 2 (13/27 = 48 %)
    const auto narrow = bootstrapRatioOfMedians({1, 2, 3}, {1}, options);
    CHECK(narrow->low == 2);
    CHECK(narrow->high == 2);
  }
  SECTION("deterministic for a seed") {
    const std::vector<double> a = {1.0, 1.1, 0.9, 1.3, 1.05}, b = {2.0, 2.4, 1.9, 2.2, 2.1};
    BootstrapOptions options;
    options.seed = 9;
    const auto first = bootstrapRatioOfMedians(a, b, options);
    const auto second = bootstrapRatioOfMedians(a, b, options);
    REQUIRE(first);
    CHECK(first->low == second->low);
    CHECK(first->high == second->high);
    CHECK(first->low <= median(a) / median(b));
    CHECK(first->high >= median(a) / median(b));
    CHECK(first->low >= 0.9 / 2.4);  // no ratio of resampled medians can leave these bounds
    CHECK(first->high <= 1.3 / 1.9);
  }
  SECTION("no interval without data or with a zero denominator") {
    CHECK_FALSE(bootstrapRatioOfMedians({}, {1}));
    CHECK_FALSE(bootstrapRatioOfMedians({1}, {}));
    CHECK_FALSE(bootstrapRatioOfMedians({1}, {0, 0}));
  }
}

TEST_CASE("bootstrapInterval of any statistic: seeded, around the estimate", "[harness]") {
  synk::testing::Noise noise(11);
  const std::vector<std::vector<double>> groups = {noise.around(2.0, 0.05, 9),
                                                   noise.around(1.0, 0.05, 9)};
  const GroupStatistic ratio = [](const std::vector<std::vector<double>>& g) {
    return median(g[0]) / median(g[1]);
  };
  const auto a = bootstrapInterval(groups, ratio);
  REQUIRE(a);
  const double estimate = median(groups[0]) / median(groups[1]);
  CHECK(a->low < estimate);
  CHECK(estimate < a->high);
  CHECK(a->low > 1.7);
  CHECK(a->high < 2.3);
  // One implementation: the ratio of medians is this bootstrap with that statistic.
  const auto b = bootstrapRatioOfMedians(groups[0], groups[1]);
  CHECK(a->low == b->low);
  CHECK(a->high == b->high);
  BootstrapOptions other;
  other.seed = 2;
  CHECK(bootstrapInterval(groups, ratio, other)->low != a->low);
  // Three groups, in order: the difference of two ratios.
  const auto three = bootstrapInterval({{4, 4}, {2, 2}, {1, 1, 1}}, [](const auto& g) {
    return median(g[0]) / median(g[1]) - median(g[2]);
  });
  CHECK(three->low == 1);
  CHECK(three->high == 1);
  // No interval for an empty group, an undefined or infinite statistic, or bad options.
  CHECK_FALSE(bootstrapInterval({{1}, {}}, ratio));
  CHECK_FALSE(bootstrapInterval({{1}, {0}}, ratio));
  CHECK_FALSE(bootstrapInterval({{1}}, [](const auto&) { return std::optional<double>(); }));
  BootstrapOptions bad;
  bad.confidence = 1;
  CHECK_FALSE(bootstrapInterval(groups, ratio, bad));
}

TEST_CASE("seedFor keeps its two inputs apart", "[harness]") {
  CHECK(seedFor("ab", "c") != seedFor("a", "bc"));
  CHECK(seedFor("a", "b") == seedFor("a", "b"));
  CHECK(seedFor("a", "b") != seedFor("b", "a"));
}
