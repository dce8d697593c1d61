#pragma once
// What a median hides, as pure functions over one point's values (its repetitions, or a
// collectives point's iterations), so that a report can say it instead of printing one number
// (tests/harness/stats/noise_test.cc checks them on known cases):
//   * two groups: the values split into a fast and a slow group, each tight, with a gap wider
//     than either group's own spread (0.8, 0.8, 0.8, 2.6, 2.6 ms: one median of 0.8 ms says
//     nothing of the slow sessions);
//   * outliers: modified z-score 0.6745 |x - median| / MAD > 3.5 (Iglewicz and Hoaglin) and at
//     least 10 % from the median (a tight set makes small deviations look extreme), from 5
//     values up;
//   * contention: other processes kept CPUs busy that the point's ranks needed.
// hyperfine and Google Benchmark warn about the same things; they print the warning, so does
// synk-bench.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace synk::harness {

struct TwoGroups {
  double low_median = 0, high_median = 0;
  size_t low_count = 0, high_count = 0;
};
// Needs 4 values, 2 a group; the gap high_min / low_max at least 1.5 and wider than each
// group's max / min.
std::optional<TwoGroups> findTwoGroups(std::vector<double> values);

// Indices of the outliers among `values` (none below 5 values or with a MAD of 0).
std::vector<size_t> findOutliers(const std::vector<double>& values);

// The warnings a point's values deserve, in words, with values in the units people read
// (formatSeconds): two groups, outliers (when there are no two groups), contention when other
// processes kept more than half a CPU busy and the ranks plus them needed more CPUs than there
// were. `other_cpus`: the mean over the point's repetitions (nullopt: not measured).
std::vector<std::string> noiseWarnings(const std::vector<double>& values,
                                       std::optional<double> other_cpus, int ranks, int cpus);

}  // namespace synk::harness
