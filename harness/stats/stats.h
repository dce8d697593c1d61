#pragma once
// The statistics synk-bench reports, as pure functions (tests/harness/stats/stats_test.cc checks
// them against hand-computed cases). The regression tests (Mann-Whitney, multiplicity control,
// change points) live beside them in significance.* and change_points.*.
//
// The unit of independence is the repetition (a fresh session): steps inside one session are
// correlated, so intervals resample repetitions, each summarised by its median step time.
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "synk/harness/base/rng.h"

namespace synk::harness {

// Median (the mean of the middle two for an even count); 0 for no samples.
double median(std::vector<double> samples);
// The p-th percentile (0..100) by linear interpolation between closest ranks (numpy's default);
// 0 for no samples.
double percentile(std::vector<double> samples, double p);

struct Summary {
  size_t n = 0;
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0, mean = 0;
  double stdev = 0;  // sample standard deviation (n - 1); 0 for n < 2
};
Summary summarize(const std::vector<double>& samples);

struct Interval {
  double low = 0, high = 0;
};

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 1;
};

// A statistic of (resampled) groups; nullopt where it is undefined, e.g. a zero denominator.
using GroupStatistic =
    std::function<std::optional<double>(const std::vector<std::vector<double>>& groups)>;

// The harness's one bootstrap: the percentile interval of statistic(groups), every group
// resampled independently with replacement, `resamples` times, in group order from one Rng (the
// same inputs give the same interval on every platform). nullopt when a group is empty, the
// options are out of range, or the statistic is undefined or not finite on a resample.
std::optional<Interval> bootstrapInterval(const std::vector<std::vector<double>>& groups,
                                          const GroupStatistic& statistic,
                                          const BootstrapOptions& options = {});

// bootstrapInterval of median(numerator) / median(denominator); nullopt when either group is
// empty or a resampled denominator median is 0.
std::optional<Interval> bootstrapRatioOfMedians(const std::vector<double>& numerator,
                                                const std::vector<double>& denominator,
                                                const BootstrapOptions& options = {});

// The same seed for the same pair of inputs, whatever order a report visits them in.
uint64_t seedFor(std::string_view a, std::string_view b);

}  // namespace synk::harness
