#include "synk/harness/stats/significance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "synk/core/error.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {
namespace {

void checkSide(std::span<const double> values, const char* side) {
  if (values.empty()) throw InvalidArgument(str("Mann-Whitney U: the ", side, " sample is empty"));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw InvalidArgument(
          str("Mann-Whitney U: value ", i, " of the ", side, " sample is ", values[i]));
    }
  }
}

// C(m + n, m) as a double (exact up to 2^53, then within rounding).
double choose(int total, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i)
    c = c * double(total - k + i) / double(i);
  return c;
}

// counts[u] = the arrangements of m values against n values (no ties) whose U is u: the
// recurrence c(m, n, u) = c(m − 1, n, u − n) + c(m, n − 1, u) (the largest value belongs to one
// side or the other). Additions only, so doubles stay accurate far past 2^53.
std::vector<double> exactCounts(int m, int n) {
  // prev[j] = counts for (i − 1, j); cur[j] = counts for (i, j).
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>{1});
  for (int i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> cur(n + 1);
    cur[0] = {1};
    for (int j = 1; j <= n; ++j) {
      std::vector<double> c(size_t(i) * j + 1, 0.0);
      for (size_t u = 0; u < prev[j].size(); ++u)
        c[u + j] += prev[j][u];  // the largest is one of the i: it beats all j
      for (size_t u = 0; u < cur[j - 1].size(); ++u)
        c[u] += cur[j - 1][u];  // the largest is one of the j: it beats none of the i
      cur[j] = std::move(c);
    }
    prev = std::move(cur);
  }
  return prev[n];
}

// Indices of p from the smallest value up (ties keep their order).
std::vector<size_t> ascending(std::span<const double> p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  return order;
}

}  // namespace

RankTest mannWhitneyU(std::span<const double> a, std::span<const double> b, int min_per_side,
                      RankMethod method) {
  checkSide(a, "first");
  checkSide(b, "second");
  const int m = int(a.size()), n = int(b.size()), total = m + n;
  RankTest test;
  test.min_p = std::min(1.0, 2.0 / choose(total, std::min(m, n)));
  test.can_reach_significance = m >= min_per_side && n >= min_per_side;

  // Midranks over the pooled sample; tie groups feed the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(total);
  for (double v : a)
    pooled.emplace_back(v, true);
  for (double v : b)
    pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (int i = 0; i < total;) {
    int j = i;
    while (j < total && pooled[j].first == pooled[i].first)
      ++j;
    const double midrank = (i + 1 + j) / 2.0;  // ranks i+1 .. j
    for (int k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += midrank;
    const double t = j - i;
    tie_term += t * t * t - t;
    i = j;
  }
  test.u = rank_sum_a - m * (m + 1) / 2.0;
  const double mean = m * double(n) / 2.0;

  if (method == RankMethod::Auto && tie_term == 0 && m <= kExactLimit && n <= kExactLimit) {
    const std::vector<double> counts = exactCounts(m, n);
    // Two-sided: twice the tail beyond the observed U, the distribution being symmetric.
    const int tail_u = int(std::lround(std::min(test.u, m * double(n) - test.u)));
    double tail = 0;
    for (int u = 0; u <= tail_u; ++u)
      tail += counts[u];
    test.exact = true;
    test.p = std::min(1.0, 2.0 * tail / choose(total, std::min(m, n)));
    return test;
  }
  const double variance =
      m * double(n) / 12.0 * ((total + 1) - tie_term / (double(total) * (total - 1)));
  if (variance <= 0) return test;  // every value equal: no evidence either way, p = 1
  const double z = std::max(0.0, std::abs(test.u - mean) - 0.5) / std::sqrt(variance);
  test.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return test;
}

std::vector<double> benjaminiHochberg(std::span<const double> p) {
  const size_t count = p.size();
  const std::vector<size_t> order = ascending(p);
  std::vector<double> adjusted(count);
  double running_min = 1.0;
  for (size_t r = count; r-- > 0;) {  // from the largest p down: adjusted = min over j >= r
    running_min = std::min(running_min, p[order[r]] * double(count) / double(r + 1));
    adjusted[order[r]] = running_min;
  }
  return adjusted;
}

std::vector<double> holm(std::span<const double> p) {
  const size_t count = p.size();
  const std::vector<size_t> order = ascending(p);
  std::vector<double> adjusted(count);
  double running_max = 0.0;
  for (size_t r = 0; r < count; ++r) {  // adjusted = max over j <= r of (count − j) p_(j)
    running_max = std::max(running_max, std::min(1.0, p[order[r]] * double(count - r)));
    adjusted[order[r]] = running_max;
  }
  return adjusted;
}

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::Same:
      return "same";
    case Verdict::Better:
      return "better";
    case Verdict::Worse:
      return "worse";
    case Verdict::Incomparable:
      return "incomparable";
  }
  return "?";
}

double relativeNoise(std::span<const double> repetitions) {
  if (repetitions.size() < 2) return 0;
  std::vector<double> values(repetitions.begin(), repetitions.end());
  const double center = median(values);
  if (center == 0) return 0;
  for (double& v : values)
    v = std::abs(v - center);
  return 1.4826 * median(values) / std::abs(center);
}

std::vector<PointComparison> comparePoints(const std::vector<PointSamples>& points,
                                           const RegressionThresholds& thresholds) {
  std::vector<PointComparison> out(points.size());
  std::vector<size_t> family;
  std::vector<double> family_p;
  for (size_t i = 0; i < points.size(); ++i) {
    const PointSamples& point = points[i];
    PointComparison& c = out[i];
    if (!point.incomparable.empty()) {
      c.reason = point.incomparable;
      continue;
    }
    if (point.baseline.empty() || point.candidate.empty()) {
      c.reason = point.baseline.empty() ? "no repetitions in the baseline"
                                        : "no repetitions in the candidate";
      continue;
    }
    c.baseline_median = median(point.baseline);
    c.candidate_median = median(point.candidate);
    c.change = c.baseline_median != 0
                   ? (c.candidate_median - c.baseline_median) / std::abs(c.baseline_median)
                   : 0;
    c.noise = relativeNoise(point.baseline);
    c.threshold = std::max(thresholds.min_change, thresholds.noise_factor * c.noise);
    c.test = mannWhitneyU(point.baseline, point.candidate, thresholds.min_repetitions);
    if (!c.test.can_reach_significance) {
      c.reason = str("cannot reach significance: ", point.baseline.size(), " baseline and ",
                     point.candidate.size(), " candidate repetitions (at least ",
                     thresholds.min_repetitions, " each needed)");
      continue;
    }
    family.push_back(i);
    family_p.push_back(c.test.p);
  }
  const std::vector<double> adjusted =
      thresholds.strict ? holm(family_p) : benjaminiHochberg(family_p);
  for (size_t k = 0; k < family.size(); ++k) {
    PointComparison& c = out[family[k]];
    c.p_adjusted = adjusted[k];
    const double worse_by =
        points[family[k]].direction == Direction::LowerIsBetter ? c.change : -c.change;
    c.verdict = Verdict::Same;
    if (c.p_adjusted <= thresholds.q && worse_by > c.threshold) c.verdict = Verdict::Worse;
    if (c.p_adjusted <= thresholds.q && -worse_by > c.threshold) c.verdict = Verdict::Better;
  }
  return out;
}

int compareExit(const std::vector<PointComparison>& points, bool fail_on_improvement) {
  bool incomparable = false;
  for (const PointComparison& c : points) {
    if (c.verdict == Verdict::Worse) return kExitRegression;
    if (c.verdict == Verdict::Better && fail_on_improvement) return kExitRegression;
    incomparable |= c.verdict == Verdict::Incomparable;
  }
  return incomparable ? kExitRunFailed : kExitOk;
}

double speedup(const ScalingSamples& s) {
  if (s.reference.empty() || s.point.empty() || s.ranks < 1 || s.reference_ranks < 1) {
    throw InvalidArgument(str("speedup: ", s.reference.size(), " reference and ", s.point.size(),
                              " point repetitions at ", s.reference_ranks, " and ", s.ranks,
                              " ranks"));
  }
  const double work = s.weak ? double(s.ranks) / s.reference_ranks : 1.0;
  return work * median(s.reference) / median(s.point);
}

ScalingChange scalingChange(const ScalingSamples& baseline, const ScalingSamples& candidate,
                            double min_change, const BootstrapOptions& options) {
  if (baseline.ranks != candidate.ranks || baseline.reference_ranks != candidate.reference_ranks ||
      baseline.weak != candidate.weak) {
    throw InvalidArgument(str("scaling change: baseline at ", baseline.ranks, " ranks against ",
                              baseline.reference_ranks, ", candidate at ", candidate.ranks,
                              " against ", candidate.reference_ranks, " (must match)"));
  }
  for (const ScalingSamples* side : {&baseline, &candidate})
    for (const auto* times : {&side->reference, &side->point})
      for (double t : *times)
        if (!(t > 0 && std::isfinite(t)))
          throw InvalidArgument(str("scaling change: a step time of ", t, " (must be > 0)"));
  ScalingChange change;
  change.baseline_speedup = speedup(baseline);
  change.candidate_speedup = speedup(candidate);
  change.speedup_change = change.candidate_speedup - change.baseline_speedup;
  ScalingSamples b = baseline, c = candidate;
  // Positive finite times give a finite statistic on every resample, so an interval exists.
  change.speedup_interval = *bootstrapInterval(
      {baseline.reference, baseline.point, candidate.reference, candidate.point},
      [&](const std::vector<std::vector<double>>& g) {
        b.reference = g[0], b.point = g[1], c.reference = g[2], c.point = g[3];
        return speedup(c) - speedup(b);
      },
      options);
  const double scale = double(baseline.reference_ranks) / baseline.ranks;  // speedup -> eff.
  change.efficiency_change = change.speedup_change * scale;
  change.efficiency_interval = {change.speedup_interval.low * scale,
                                change.speedup_interval.high * scale};
  const double floor = min_change * change.baseline_speedup;
  const Interval& s = change.speedup_interval;
  if (s.high < 0 && -change.speedup_change > floor) change.verdict = Verdict::Worse;
  if (s.low > 0 && change.speedup_change > floor) change.verdict = Verdict::Better;
  return change;
}

}  // namespace synk::harness
