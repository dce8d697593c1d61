#include "synk/harness/stats/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

#include "synk/core/error.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {
namespace {

struct Moments {
  double mean = 0;
  double variance = 0;  // sample variance (n − 1)
};

Moments moments(std::span<const double> v) {
  Moments m;
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  for (double x : v)
    m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= double(v.size() - 1);
  return m;
}

// Splits [lo, hi) of `logs` (and `series` for the medians) and recurses.
void segment(std::span<const double> series, std::span<const double> logs, size_t lo, size_t hi,
             const ChangePointOptions& options, std::vector<ChangePoint>& found) {
  const size_t min_segment = size_t(options.min_segment);
  if (hi - lo < 2 * min_segment) return;
  ChangePoint best;
  bool have = false;
  for (size_t k = lo + min_segment; k + min_segment <= hi; ++k) {
    const double before = median(std::vector<double>(series.begin() + lo, series.begin() + k));
    const double after = median(std::vector<double>(series.begin() + k, series.begin() + hi));
    const double shift = after / before - 1;
    if (std::abs(shift) < options.min_shift) continue;
    // The values either side of the split must lie nearer their own side's level. Otherwise a
    // step 2 runs before the end passes for one 3 runs before it, the new segment padded with
    // an old value (its median still the new level): the 3-run minimum would mean nothing.
    const double mid = (std::log(before) + std::log(after)) / 2;
    if ((logs[k] > mid) != (after > before) || (logs[k - 1] > mid) != (before > after)) continue;
    const double p = studentTTestP(logs.subspan(lo, k - lo), logs.subspan(k, hi - k));
    // Ties (several splits at p = 0 on noiseless steps) go to the larger shift, then the
    // earlier index: the same series always gives the same answer.
    if (!have || p < best.p || (p == best.p && std::abs(shift) > std::abs(best.shift))) {
      best = {k, before, after, shift, p};
      have = true;
    }
  }
  if (!have || !(best.p < options.max_p)) return;
  found.push_back(best);
  segment(series, logs, lo, best.index, options, found);
  segment(series, logs, best.index, hi, options, found);
}

}  // namespace

double studentTTestP(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) {
    throw InvalidArgument(
        str("Student's t-test: ", a.size(), " and ", b.size(), " values (at least 2 each)"));
  }
  const Moments ma = moments(a), mb = moments(b);
  const double na = double(a.size()), nb = double(b.size()), df = na + nb - 2;
  const double pooled = ((na - 1) * ma.variance + (nb - 1) * mb.variance) / df;
  const double diff = ma.mean - mb.mean;
  if (pooled == 0) return diff == 0 ? 1.0 : 0.0;
  const double t = diff / std::sqrt(pooled * (1 / na + 1 / nb));
  const boost::math::students_t dist(df);
  return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::abs(t))));
}

std::vector<ChangePoint> findChangePoints(std::span<const double> series,
                                          const ChangePointOptions& options) {
  if (options.min_segment < 2) {
    throw InvalidArgument(str("change points: min_segment ", options.min_segment,
                              " (a two-sample test needs at least 2 values a side)"));
  }
  std::vector<double> logs(series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    if (!std::isfinite(series[i]) || series[i] <= 0) {
      throw InvalidArgument(
          str("change points: value ", i, " is ", series[i], " (must be finite and > 0)"));
    }
    logs[i] = std::log(series[i]);
  }
  std::vector<ChangePoint> found;
  segment(series, logs, 0, series.size(), options, found);
  std::sort(found.begin(), found.end(),
            [](const ChangePoint& x, const ChangePoint& y) { return x.index < y.index; });
  return found;
}

}  // namespace synk::harness
