#include "synk/harness/stats/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "synk/harness/base/text_table.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {

std::optional<TwoGroups> findTwoGroups(std::vector<double> values) {
  if (values.size() < 4) return std::nullopt;
  std::sort(values.begin(), values.end());
  if (values.front() <= 0) return std::nullopt;
  std::optional<TwoGroups> best;
  double best_gap = 0;
  for (size_t k = 2; k + 2 <= values.size(); ++k) {
    const double low_min = values.front(), low_max = values[k - 1];
    const double high_min = values[k], high_max = values.back();
    const double gap = high_min / low_max;
    const double spread = std::max(low_max / low_min, high_max / high_min);
    if (gap < 1.5 || gap <= spread || gap <= best_gap) continue;
    best_gap = gap;
    best = TwoGroups{median({values.begin(), values.begin() + static_cast<long>(k)}),
                     median({values.begin() + static_cast<long>(k), values.end()}), k,
                     values.size() - k};
  }
  return best;
}

std::vector<size_t> findOutliers(const std::vector<double>& values) {
  if (values.size() < 5) return {};
  const double m = median(values);
  std::vector<double> deviations;
  for (double v : values)
    deviations.push_back(std::abs(v - m));
  const double mad = median(deviations);
  if (mad <= 0) return {};
  std::vector<size_t> out;
  for (size_t i = 0; i < values.size(); ++i) {
    // Far out for the spread, and far enough to matter: in a tight set a value 3 % off has a
    // large z-score, but says nothing a reader needs to know.
    const double deviation = std::abs(values[i] - m);
    if (0.6745 * deviation / mad > 3.5 && deviation >= 0.1 * std::abs(m)) out.push_back(i);
  }
  return out;
}

std::vector<std::string> noiseWarnings(const std::vector<double>& values,
                                       std::optional<double> other_cpus, int ranks, int cpus) {
  std::vector<std::string> out;
  if (const auto groups = findTwoGroups(values)) {
    out.push_back("values fall in two groups, " + formatSeconds(groups->low_median) + " (" +
                  std::to_string(groups->low_count) + ") and " +
                  formatSeconds(groups->high_median) + " (" + std::to_string(groups->high_count) +
                  "): the median stands for one of them; something changed between sessions "
                  "(load, clocks, placement)");
  } else if (const std::vector<size_t> outliers = findOutliers(values); !outliers.empty()) {
    std::string list;
    for (size_t i : outliers)
      list += (list.empty() ? "" : ", ") + formatSeconds(values[i]);
    out.push_back(std::to_string(outliers.size()) + " outlier(s) (" + list + ", median " +
                  formatSeconds(median(values)) +
                  "): another process or a cold cache may have "
                  "interfered; rerun on a quiet machine");
  }
  if (other_cpus && *other_cpus > 0.5 && ranks + *other_cpus > cpus) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "other processes kept %.1f of %d CPU(s) busy while its %d rank(s) ran: "
                  "the times include waiting for them",
                  *other_cpus, cpus, ranks);
    out.push_back(text);
  }
  return out;
}

}  // namespace synk::harness
