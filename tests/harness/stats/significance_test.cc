// The statistics behind `synk-bench compare` against known cases: published or hand-worked
// p-values (each expected value says where it comes from) and the regression rule of issue 11.
#include "synk/harness/stats/significance.h"

#include <catch2/catch.hpp>

#include "synk/core/error.h"
#include "synk/harness/base/errors.h"
#include "tests/harness/noise.h"

using namespace synk::harness;
using synk::testing::Noise;

TEST_CASE("Mann-Whitney U: scipy's documented example, exact and asymptotic", "[harness]") {
  // scipy.stats.mannwhitneyu docs, "Examples" (diagnosis ages, from its reference [4]):
  // U1 = 17, exact p = 0.1111111111111111, asymptotic p = 0.11134688653314041. By hand: U = 17
  // (pairs male > female), U2 = 20 - 17 = 3; P(U <= 3) counts the partitions of 0..3 into at
  // most 4 parts of at most 5 = 1 + 1 + 2 + 3 = 7 of C(9, 4) = 126, so p = 2 * 7 / 126.
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  const RankTest exact = mannWhitneyU(males, females);
  CHECK(exact.exact);
  CHECK(exact.u == 17);
  CHECK(exact.p == Approx(14.0 / 126).epsilon(1e-12));
  // 4 females: the test can never reach significance, and says so.
  CHECK_FALSE(exact.can_reach_significance);
  CHECK(exact.min_p == Approx(2.0 / 126).epsilon(1e-12));
  // Normal approximation: z = (|17 - 10| - 0.5) / sqrt(5 * 4 * 10 / 12) = 1.59217.
  const RankTest asymptotic = mannWhitneyU(males, females, 5, RankMethod::Asymptotic);
  CHECK_FALSE(asymptotic.exact);
  CHECK(asymptotic.p == Approx(0.11134688653314041).epsilon(1e-9));
}

TEST_CASE("Mann-Whitney U: exact tails match Mann and Whitney's table", "[harness]") {
  // Mann & Whitney (1947), Table I, n = m = 5: P(U <= 2) = .016 (= 4 / 252 exactly: the
  // partitions of 0, 1, 2 into at most 5 parts of at most 5 number 1, 1, 2).
  const std::vector<double> a = {1, 2, 3, 4, 7}, b = {5, 6, 8, 9, 10};
  const RankTest test = mannWhitneyU(a, b);
  CHECK(test.u == 2);
  CHECK(test.p == Approx(8.0 / 252).epsilon(1e-12));
  CHECK(test.can_reach_significance);
  // The order of the samples does not change a two-sided p.
  CHECK(mannWhitneyU(b, a).u == 23);
  CHECK(mannWhitneyU(b, a).p == Approx(test.p).epsilon(1e-12));
  // Complete separation gives the floor 2 / C(2n, n): 0.0079 for 5 a side, 1.6e-4 for 8
  // (../shared/notes/research-harness.md, section 3.1).
  const RankTest five =
      mannWhitneyU(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10});
  CHECK(five.p == Approx(2.0 / 252).epsilon(1e-12));
  CHECK(five.p == five.min_p);
  std::vector<double> low(8), high(8);
  for (int i = 0; i < 8; ++i) {
    low[i] = i;
    high[i] = 100 + i;
  }
  CHECK(mannWhitneyU(low, high).p == Approx(2.0 / 12870).epsilon(1e-12));
}

TEST_CASE("Mann-Whitney U: ties use the tie-corrected normal approximation", "[harness]") {
  // X = 5 1 4 3 5, Y = 2 4 7 -1 0 4 (DolphinDB's mannWhitneyUTest documentation, which prints
  // U = 11 for Y and p = 0.518023). By hand: midranks of X are 3, 5, 7, 9.5, 9.5, so
  // U_X = 34 - 15 = 19; ties 4,4,4 and 5,5 give sum(t^3 - t) = 30;
  // var = 30 / 12 * (12 - 30 / 110) = 29.3182; z = (|19 - 15| - 0.5) / 5.41463 = 0.646397;
  // p = erfc(z / sqrt 2) = 0.5180221.
  const std::vector<double> x = {5, 1, 4, 3, 5}, y = {2, 4, 7, -1, 0, 4};
  const RankTest test = mannWhitneyU(x, y);
  CHECK_FALSE(test.exact);
  CHECK(test.u == 19);
  CHECK(test.p == Approx(0.5180220946).epsilon(1e-9));
  CHECK(test.p == Approx(0.518023).margin(1e-6));
  // Every value equal: no evidence of a difference.
  CHECK(mannWhitneyU(std::vector<double>(6, 3.0), std::vector<double>(7, 3.0)).p == 1);
}

TEST_CASE("Mann-Whitney U: bad input is named", "[harness]") {
  CHECK_THROWS_AS(mannWhitneyU(std::vector<double>{}, std::vector<double>{1}),
                  synk::InvalidArgument);
  CHECK_THROWS_WITH(mannWhitneyU(std::vector<double>{1, NAN}, std::vector<double>{1}),
                    Catch::Contains("value 1 of the first sample is nan"));
}

TEST_CASE("Benjamini-Hochberg and Holm on Benjamini and Hochberg's own example", "[harness]") {
  // Benjamini & Hochberg (1995), section 4.1: 15 p-values; at q = 0.05 the step-up procedure
  // rejects the 4 smallest (0.0095 <= 4/15 * 0.05 = 0.0133, and no larger p_(k) is below
  // k/15 * 0.05), Bonferroni only 3. Holm by hand: 0.0001*15, 0.0004*14, 0.0019*13 = 0.0247
  // pass; 0.0095*12 = 0.114 does not: 3 rejections.
  const std::vector<double> p = {0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};
  const std::vector<double> bh = benjaminiHochberg(p);
  const std::vector<double> hm = holm(p);
  int bh_rejected = 0, holm_rejected = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    bh_rejected += bh[i] <= 0.05;
    holm_rejected += hm[i] <= 0.05;
  }
  CHECK(bh_rejected == 4);
  CHECK(holm_rejected == 3);
  // Adjusted values by hand: BH_(1) = min_j 15/j p_(j) = 15 * 0.0001; BH_(4) = 15/4 * 0.0095;
  // BH_(5) = min(15/5 * 0.0201, 15/7 * 0.0298, ...) = 0.0603. Holm_(4) = max(..., 12 * 0.0095).
  CHECK(bh[0] == Approx(0.0015));
  CHECK(bh[3] == Approx(0.035625));
  CHECK(bh[4] == Approx(0.0603));
  CHECK(hm[2] == Approx(0.0247));
  CHECK(hm[3] == Approx(0.114));
  CHECK(hm[14] == 1.0);
  // Order in, order out: the same family shuffled gets the same adjusted values.
  const std::vector<double> shuffled = {p[4], p[0], p[14], p[3]};
  const std::vector<double> bh4 = benjaminiHochberg(shuffled);
  CHECK(bh4[1] == Approx(4 * 0.0001));
  CHECK(bh4[0] == Approx(4.0 / 3 * 0.0201));
  CHECK(bh4[2] == 1.0);
  CHECK(benjaminiHochberg(std::vector<double>{}).empty());
}

TEST_CASE("relative noise is the robust spread of the repetitions", "[harness]") {
  // Median 3, absolute deviations 2, 1, 0, 1, 97: MAD 1, noise 1.4826 / 3. One stray
  // repetition (100) does not inflate it, as it would a coefficient of variation (~1.5).
  CHECK(relativeNoise(std::vector<double>{1, 2, 3, 4, 100}) == Approx(1.4826 / 3));
  CHECK(relativeNoise(std::vector<double>(5, 7.0)) == 0);
  CHECK(relativeNoise(std::vector<double>{7.0}) == 0);
}

namespace {

PointSamples point(std::vector<double> baseline, std::vector<double> candidate,
                   Direction direction = Direction::LowerIsBetter) {
  return {std::move(baseline), std::move(candidate), direction, ""};
}

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (double& v : values)
    v *= factor;
  return values;
}

}  // namespace

TEST_CASE("identical samples: no regression", "[harness]") {
  Noise noise(1);
  const std::vector<double> runs = noise.around(100, 0.01, 9);
  const auto c = comparePoints({point(runs, runs)}).at(0);
  CHECK(c.verdict == Verdict::Same);
  CHECK(c.change == 0);
  CHECK(c.test.p == 1);
}

TEST_CASE("a 10 % shift over 9 repetitions: regression (and the same speed-up: better)",
          "[harness]") {
  Noise noise(2);
  const std::vector<double> base = noise.around(100, 0.01, 9);
  const std::vector<double> slower = noise.around(110, 0.01, 9);
  const auto worse = comparePoints({point(base, slower)}).at(0);
  CHECK(worse.verdict == Verdict::Worse);
  CHECK(worse.change == Approx(0.10).margin(0.02));
  CHECK(worse.p_adjusted <= 0.05);
  const auto better = comparePoints({point(slower, base)}).at(0);
  CHECK(better.verdict == Verdict::Better);
  // A rate (samples/s) that drops by 10 % is the regression.
  const auto rate = comparePoints({point(slower, base, Direction::HigherIsBetter)}).at(0);
  CHECK(rate.verdict == Verdict::Worse);
}

TEST_CASE("a 2 % shift inside the noise: no regression", "[harness]") {
  Noise noise(3);
  const std::vector<double> base = noise.around(100, 0.02, 9);
  const auto c = comparePoints({point(base, noise.around(102, 0.02, 9))}).at(0);
  CHECK(c.verdict == Verdict::Same);
  CHECK(c.threshold >= 0.05);
}

TEST_CASE("a significant change smaller than twice the baseline's noise is not a regression",
          "[harness]") {
  // Baseline deviations from 100: 6 4 3 1 0 1 3 4 6, MAD 3: noise 1.4826 * 3 / 100 = 4.4 %, so
  // the threshold is 8.9 %. The candidate is 7 % slower and the test is sure of it (U = 10:
  // exact p = 2 * 137 / 48620 = 0.0056, counted by hand from the U distribution), but a 7 %
  // change on a machine this noisy is not called a regression.
  const std::vector<double> base = {94, 96, 97, 99, 100, 101, 103, 104, 106};
  const auto c = comparePoints({point(base, scaled(base, 1.07))}).at(0);
  CHECK(c.test.p == Approx(2.0 * 137 / 48620).epsilon(1e-12));
  CHECK(c.p_adjusted <= 0.05);
  CHECK(c.noise == Approx(1.4826 * 3 / 100));
  CHECK(c.threshold == Approx(2 * 1.4826 * 3 / 100));
  CHECK(c.verdict == Verdict::Same);
  // Thresholds are configurable: without the noise term the same data is a regression.
  RegressionThresholds no_noise;
  no_noise.noise_factor = 0;
  CHECK(comparePoints({point(base, scaled(base, 1.07))}, no_noise).at(0).verdict == Verdict::Worse);
}

TEST_CASE("fewer than 5 repetitions: cannot reach significance, never 'same'", "[harness]") {
  const auto c = comparePoints({point({100, 101, 99, 100}, {150, 151, 149, 152, 150})}).at(0);
  CHECK(c.verdict == Verdict::Incomparable);
  CHECK_THAT(c.reason, Catch::Contains("cannot reach significance"));
  CHECK(c.change == Approx(0.5));  // the change is still reported
  const auto given = PointSamples{
      {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, Direction::LowerIsBetter, "machine differs: h100 vs h200"};
  const auto d = comparePoints({given}).at(0);
  CHECK(d.verdict == Verdict::Incomparable);
  CHECK(d.reason == "machine differs: h100 vs h200");
  CHECK(comparePoints({point({}, {1, 2, 3, 4, 5})}).at(0).reason ==
        "no repetitions in the baseline");
}

TEST_CASE("strict (Holm) needs more evidence than Benjamini-Hochberg", "[harness]") {
  // Three points, each with U = 2 over 5 against 5 (exact p = 8 / 252 = 0.032, Mann-Whitney's
  // table) and a 12.7 % slowdown. BH: every adjusted p stays 0.032 <= 0.05, all worse.
  // Holm: the smallest is multiplied by 3 (0.095): none.
  const std::vector<double> base = {100, 101, 102, 103, 114}, cand = {112, 113, 115, 116, 117};
  const std::vector<PointSamples> family(3, point(base, cand));
  for (const auto& c : comparePoints(family)) {
    CHECK(c.p_adjusted == Approx(8.0 / 252));
    CHECK(c.verdict == Verdict::Worse);
  }
  RegressionThresholds strict;
  strict.strict = true;
  for (const auto& c : comparePoints(family, strict)) {
    CHECK(c.p_adjusted == Approx(3 * 8.0 / 252));
    CHECK(c.verdict == Verdict::Same);
  }
}

TEST_CASE("28 points of pure noise over 100 seeded trials: at most 5 % of compares flag",
          "[harness]") {
  // A sweep of 4 rank counts x 7 batch sizes, baseline and candidate drawn from the same
  // distribution (3 % noise, 9 repetitions). Uncorrected tests at p < 0.01 would flag about
  // one compare in four; Benjamini-Hochberg keeps the chance of any flag under q = 5 %, before
  // the effect-size floor removes more. Counted as flagged by the whole rule, and as
  // significant after BH alone (any direction, any size).
  Noise noise(2024);
  int flagged = 0, significant = 0, uncorrected = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<PointSamples> sweep;
    for (int p = 0; p < 28; ++p) {
      const double level = 1e-3 * (1 + p);
      sweep.push_back(point(noise.around(level, 0.03, 9), noise.around(level, 0.03, 9)));
    }
    bool any_flag = false, any_significant = false, any_uncorrected = false;
    for (const auto& c : comparePoints(sweep)) {
      any_flag |= c.verdict == Verdict::Worse || c.verdict == Verdict::Better;
      any_significant |= c.p_adjusted <= 0.05;
      any_uncorrected |= c.test.p < 0.01;
    }
    flagged += any_flag;
    significant += any_significant;
    uncorrected += any_uncorrected;
  }
  CHECK(flagged <= 5);
  CHECK(significant <= 5);
  // The same sweeps tested point by point at p < 0.01 with no correction: the false alarms the
  // correction exists for (16 of these 100 compares; 1 - 0.99^28 = 25 % expected at most).
  CHECK(uncorrected >= 10);
}

TEST_CASE("one real 10 % regression among 27 unchanged points is found, and only it", "[harness]") {
  Noise noise(7);
  std::vector<PointSamples> sweep;
  for (int p = 0; p < 28; ++p) {
    const double level = 1e-3 * (1 + p);
    sweep.push_back(
        point(noise.around(level, 0.01, 9), noise.around(p == 13 ? level * 1.10 : level, 0.01, 9)));
  }
  const auto compared = comparePoints(sweep);
  for (int p = 0; p < 28; ++p) {
    INFO("point " << p);
    CHECK((compared[p].verdict == Verdict::Worse) == (p == 13));
  }
}

TEST_CASE("compare's exit status: 0 same, 1 regression, 3 incomparable", "[harness]") {
  auto verdicts = [](std::initializer_list<Verdict> list) {
    std::vector<PointComparison> points;
    for (Verdict v : list) {
      points.emplace_back();
      points.back().verdict = v;
    }
    return points;
  };
  CHECK(compareExit({}) == kExitOk);
  CHECK(compareExit(verdicts({Verdict::Same, Verdict::Better})) == kExitOk);
  CHECK(compareExit(verdicts({Verdict::Same, Verdict::Better}), true) == kExitRegression);
  CHECK(compareExit(verdicts({Verdict::Same, Verdict::Incomparable})) == kExitRunFailed);
  CHECK(compareExit(verdicts({Verdict::Incomparable, Verdict::Worse})) == kExitRegression);
  // The rule end to end: too few repetitions is incomplete, not a pass.
  CHECK(compareExit(comparePoints({point({1, 2, 3}, {1, 2, 3})})) == kExitRunFailed);
}

TEST_CASE("speedup and efficiency change with bootstrap intervals", "[harness]") {
  Noise noise(5);
  // Weak scaling on 4 ranks: 1-rank step 100 ms; the baseline's 4-rank step 110 ms (speedup
  // 4 * 100 / 110 = 3.64, efficiency 0.91), the candidate's 125 ms (3.2, 0.8).
  ScalingSamples base{noise.around(0.100, 0.01, 9), noise.around(0.110, 0.01, 9), 4, 1, true};
  ScalingSamples cand{noise.around(0.100, 0.01, 9), noise.around(0.125, 0.01, 9), 4, 1, true};
  CHECK(speedup(base) == Approx(4 * median(base.reference) / median(base.point)));
  const ScalingChange worse = scalingChange(base, cand);
  CHECK(worse.baseline_speedup == Approx(3.64).margin(0.1));
  CHECK(worse.candidate_speedup == Approx(3.2).margin(0.1));
  CHECK(worse.speedup_change == Approx(worse.candidate_speedup - worse.baseline_speedup));
  CHECK(worse.speedup_interval.high < 0);
  CHECK(worse.speedup_interval.low < worse.speedup_change);
  CHECK(worse.efficiency_change == Approx(worse.speedup_change / 4));
  CHECK(worse.efficiency_change == Approx(-0.11).margin(0.02));
  CHECK(worse.efficiency_interval.high == Approx(worse.speedup_interval.high / 4));
  CHECK(worse.verdict == Verdict::Worse);
  CHECK(scalingChange(cand, base).verdict == Verdict::Better);
  // The same scaling measured again: the interval covers no change.
  ScalingSamples again{noise.around(0.100, 0.01, 9), noise.around(0.110, 0.01, 9), 4, 1, true};
  const ScalingChange same = scalingChange(base, again);
  CHECK(same.speedup_interval.low < 0);
  CHECK(same.speedup_interval.high > 0);
  CHECK(same.verdict == Verdict::Same);
  // Strong scaling: no work factor, efficiency = speedup / 4.
  ScalingSamples strong = base;
  strong.weak = false;
  CHECK(speedup(strong) == Approx(median(base.reference) / median(base.point)));
  CHECK_THROWS_AS(scalingChange(base, strong), synk::InvalidArgument);
  ScalingSamples zero = cand;
  zero.point[0] = 0;
  CHECK_THROWS_AS(scalingChange(base, zero), synk::InvalidArgument);
}
