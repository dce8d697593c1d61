#include "synk/harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "synk/harness/base/hash.h"

namespace synk::harness {
namespace {

// Median of `v` (reordered in place).
double medianInPlace(std::vector<double>& v) {
  const size_t n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  const double upper = *mid;
  const double lower = *std::max_element(v.begin(), mid);
  return (lower + upper) / 2;
}

double sortedPercentile(const std::vector<double>& sorted, double p) {
  const double at = std::clamp(p, 0.0, 100.0) / 100.0 * double(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - double(lo));
}

}  // namespace

double median(std::vector<double> samples) {
  return samples.empty() ? 0 : medianInPlace(samples);
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return sortedPercentile(samples, p);
}

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.q1 = sortedPercentile(sorted, 25);
  s.median = sortedPercentile(sorted, 50);
  s.q3 = sortedPercentile(sorted, 75);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(s.n);
  if (s.n > 1) {
    double squares = 0;
    for (double x : sorted)
      squares += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(squares / double(s.n - 1));
  }
  return s;
}

std::optional<Interval> bootstrapInterval(const std::vector<std::vector<double>>& groups,
                                          const GroupStatistic& statistic,
                                          const BootstrapOptions& options) {
  if (options.resamples < 1 || !(options.confidence > 0 && options.confidence < 1))
    return std::nullopt;
  for (const auto& group : groups)
    if (group.empty()) return std::nullopt;
  Rng rng(options.seed);
  std::vector<std::vector<double>> resampled = groups;
  std::vector<double> values;
  values.reserve(static_cast<size_t>(options.resamples));
  for (int b = 0; b < options.resamples; ++b) {
    for (size_t g = 0; g < groups.size(); ++g)
      for (double& x : resampled[g])
        x = groups[g][rng.below(groups[g].size())];
    const std::optional<double> value = statistic(resampled);
    if (!value || !std::isfinite(*value)) return std::nullopt;
    values.push_back(*value);
  }
  std::sort(values.begin(), values.end());
  const double tail = (1 - options.confidence) / 2 * 100;
  return Interval{sortedPercentile(values, tail), sortedPercentile(values, 100 - tail)};
}

std::optional<Interval> bootstrapRatioOfMedians(const std::vector<double>& numerator,
                                                const std::vector<double>& denominator,
                                                const BootstrapOptions& options) {
  return bootstrapInterval(
      {numerator, denominator},
      [](const std::vector<std::vector<double>>& g) -> std::optional<double> {
        const double d = median(g[1]);
        if (d == 0) return std::nullopt;
        return median(g[0]) / d;
      },
      options);
}

uint64_t seedFor(std::string_view a, std::string_view b) {
  // A separator byte between the two, so ("ab", "c") and ("a", "bc") differ.
  return fnv1a(b, fnv1a("\xff", fnv1a(a)));
}

}  // namespace synk::harness
