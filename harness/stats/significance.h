#pragma once
// Did a candidate get worse than a baseline? The statistics behind `synk-bench compare`, as pure
// functions over one value per repetition (a repetition is a fresh session, the independent unit;
// steps inside one are autocorrelated). See harness/stats/README.md, "Regressions", for the rule
// and why each part of it is there.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "synk/harness/stats/stats.h"  // Interval, BootstrapOptions, bootstrapInterval

namespace synk::harness {

// ---- Mann–Whitney U, two-sided ----------------------------------------------------------------

struct RankTest {
  // U of the first sample: the pairs (a, b) with a > b, a tie counting one half.
  double u = 0;
  // Two-sided p-value: exact null distribution without ties and with at most kExactLimit
  // observations per side; otherwise the normal approximation with tie and continuity
  // corrections.
  double p = 1;
  bool exact = false;
  // The smallest two-sided p these sample sizes can produce, 2 / C(m + n, m): with 4 against 4 it
  // is 0.029, so no test at 0.01 can pass, however large the change.
  double min_p = 1;
  // Both sides have at least `min_per_side` observations. When false, report that the test
  // cannot reach significance; never treat its p as a pass.
  bool can_reach_significance = false;
};

inline constexpr int kExactLimit = 50;

// Auto: exact where it applies (see RankTest::p). Asymptotic: always the normal approximation.
enum class RankMethod { Auto, Asymptotic };

// Throws InvalidArgument for an empty side or a value that is not finite.
RankTest mannWhitneyU(std::span<const double> a, std::span<const double> b, int min_per_side = 5,
                      RankMethod method = RankMethod::Auto);

// ---- Multiple comparisons ---------------------------------------------------------------------

// Adjusted p-values, in the input's order: reject hypothesis i at level q when adjusted[i] <= q.
// Benjamini–Hochberg (step-up, controls the false discovery rate; under the global null, the
// chance of any false alarm) and Holm (step-down, controls the family-wise error rate).
std::vector<double> benjaminiHochberg(std::span<const double> p);
std::vector<double> holm(std::span<const double> p);

// ---- The regression rule ----------------------------------------------------------------------

enum class Direction { LowerIsBetter, HigherIsBetter };
enum class Verdict { Same, Better, Worse, Incomparable };
const char* verdictName(Verdict verdict);  // "same", "better", "worse", "incomparable"

struct RegressionThresholds {
  // False discovery rate over the compared points (Benjamini–Hochberg); with `strict`, the
  // family-wise error rate (Holm).
  double q = 0.05;
  bool strict = false;
  // A significant change counts only when larger than max(min_change, noise_factor × noise),
  // noise being the baseline's own run-to-run noise (relativeNoise).
  double min_change = 0.05;
  double noise_factor = 2.0;
  // Fewer repetitions than this on either side: the point is incomparable ("cannot reach
  // significance"), never "same".
  int min_repetitions = 5;
};

// The run-to-run noise of one side: the robust relative standard deviation of its repetition
// values, 1.4826 × MAD / median (1.4826 makes the MAD estimate σ for normal noise; unlike the
// coefficient of variation, one stray repetition does not inflate it). 0 for fewer than 2 values.
double relativeNoise(std::span<const double> repetitions);

struct PointSamples {
  // One value per repetition (the repetition's median step time, or a rate).
  std::vector<double> baseline;
  std::vector<double> candidate;
  Direction direction = Direction::LowerIsBetter;
  // Set by the caller when the two sides may not be compared (different machine or config key);
  // the reason is reported as given.
  std::string incomparable;
};

struct PointComparison {
  double baseline_median = 0;
  double candidate_median = 0;
  // (candidate − baseline) / baseline of the medians of the repetition values.
  double change = 0;
  double noise = 0;      // relativeNoise(baseline)
  double threshold = 0;  // max(min_change, noise_factor × noise)
  RankTest test;
  // p after Benjamini–Hochberg (or Holm); 1 for points outside the family (incomparable).
  double p_adjusted = 1;
  Verdict verdict = Verdict::Incomparable;
  std::string reason;  // why incomparable
};

// Compares every point; the multiple-comparison family is the points that can reach
// significance. A point is worse (better) when its adjusted p <= q and it moved the wrong (right)
// way by more than its threshold.
std::vector<PointComparison> comparePoints(const std::vector<PointSamples>& points,
                                           const RegressionThresholds& thresholds = {});

// `synk-bench compare`'s exit status (errors.h): kExitRegression (1) when any point is worse (or
// better, with fail_on_improvement): a regression outranks an incomplete compare, it is a
// finding either way; else kExitRunFailed (3) when any point is incomparable (another machine or
// config, or too few repetitions to tell); else kExitOk. 2 (bad input) is the command line's.
int compareExit(const std::vector<PointComparison>& points, bool fail_on_improvement = false);

// ---- Speedup and efficiency ------------------------------------------------------------------

// One point of a scaling sweep and its reference (fewest ranks, usually 1): step times, one per
// repetition. Speedup = work × median(reference) / median(point), work = ranks / reference
// ranks under weak scaling (each rank does the reference's work) and 1 under strong scaling;
// efficiency = speedup / (ranks / reference ranks).
struct ScalingSamples {
  std::vector<double> reference;
  std::vector<double> point;
  int ranks = 1;
  int reference_ranks = 1;
  bool weak = true;
};

double speedup(const ScalingSamples& samples);

struct ScalingChange {
  double baseline_speedup = 0;
  double candidate_speedup = 0;
  // Candidate − baseline, as measured, with seeded bootstrap intervals (stats.h) over the four
  // repetition sets; efficiency = speedup / (ranks / reference ranks).
  double speedup_change = 0;
  Interval speedup_interval;
  double efficiency_change = 0;
  Interval efficiency_interval;
  // Worse when the whole speedup interval lies below 0 and the drop exceeds min_change of the
  // baseline's speedup; better symmetrically; else same.
  Verdict verdict = Verdict::Same;
};

// Throws InvalidArgument when the two sweeps differ in ranks, reference ranks or scaling, or a
// side has no repetitions or a time that is not positive.
ScalingChange scalingChange(const ScalingSamples& baseline, const ScalingSamples& candidate,
                            double min_change = 0.05, const BootstrapOptions& options = {});

}  // namespace synk::harness
