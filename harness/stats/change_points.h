#pragma once
// Where did a benchmark's history shift for good? Deterministic binary segmentation over one
// value per commit (the median of that commit's repetition medians), in commit order: find the
// split of a segment with the smallest two-sample p among those that shift the median by at
// least min_shift; keep it when p < max_p, then split both halves the same way.
//
// The two-sample test is Student's t with pooled variance on log values, as Hunter/Otava use.
// Mann–Whitney cannot serve here: with 3 values a side its smallest p is 0.1, never below 0.001.
// Pooled rather than Welch: every split of a segment then has the same degrees of freedom, so
// the smallest p is the largest |t| (the classic likelihood-ratio choice of split), while
// Welch's degrees of freedom change with the split and pull the choice one commit off a step
// near a segment's end. Logs make a shift relative (a 5 % step weighs the same at 1 µs as at
// 1 s) and tame a long tail.
#include <cstddef>
#include <span>
#include <vector>

namespace synk::harness {

struct ChangePointOptions {
  double max_p = 0.001;
  double min_shift = 0.05;  // |median after / median before − 1|
  int min_segment = 3;      // values on each side of a split, within its segment
};

struct ChangePoint {
  size_t index = 0;   // the first value of the new level
  double before = 0;  // median of the segment's values before index
  double after = 0;   // median from index to the segment's end
  double shift = 0;   // after / before − 1
  double p = 1;
};

// In ascending index order. Throws InvalidArgument for a value that is not finite and > 0.
std::vector<ChangePoint> findChangePoints(std::span<const double> series,
                                          const ChangePointOptions& options = {});

// Two-sided p of Student's two-sample t-test (pooled variance, n_a + n_b − 2 degrees of
// freedom), at least 2 values a side: 1 when both have zero variance and equal means, 0 when
// they have zero variance and differ.
double studentTTestP(std::span<const double> a, std::span<const double> b);

}  // namespace synk::harness
