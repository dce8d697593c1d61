#pragma once
// The statistics synk-bench reports, as pure functions (tests/harness/stats_test.cc checks them
// against hand-computed cases). The regression tests (Mann-Whitney, multiplicity control, change
// points) live beside them in significance.* and change_points.*.
//
// The unit of independence is the repetition (a fresh session): steps inside one session are
// correlated, so intervals resample repetitions, each summarised by its median step time.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

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

// A small deterministic generator (SplitMix64): the same seed gives the same stream on every
// platform, unlike std::uniform_int_distribution, so reported intervals are reproducible.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n), without modulo bias; n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [0, 1).
  double uniform();

 private:
  uint64_t state_;
};

struct Interval {
  double low = 0, high = 0;
};

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 1;
};

// Percentile bootstrap interval of median(numerator) / median(denominator): both groups are
// resampled independently with replacement, `resamples` times. nullopt when either group is
// empty or a resampled denominator median is 0.
std::optional<Interval> bootstrapRatioOfMedians(const std::vector<double>& numerator,
                                                const std::vector<double>& denominator,
                                                const BootstrapOptions& options = {});

// The same seed for the same pair of inputs, whatever order a report visits them in.
uint64_t seedFor(std::string_view a, std::string_view b);

}  // namespace synk::harness
