#pragma once
// `synk-bench compare BASELINE CANDIDATE`: two stored runs, point by point, by the regression
// rule of significance.h. Points pair up by their axes; a pair whose comparability keys differ
// (another machine, another configuration) is incomparable unless forced, and says why. Each
// repetition contributes one value (seconds, lower is better): a train point's median step time
// on the master's clock, a collectives point's median over iterations of the slowest rank's
// time, an imported micro-benchmark repetition's time per iteration.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/stats/significance.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

struct CompareOptions {
  // Thresholds given on the command line; the rest come from the baseline run's configuration
  // (its [compare] section), then the defaults.
  std::optional<double> min_change, noise_factor, q;
  std::optional<int> min_repetitions;
  bool strict = false;               // Holm instead of Benjamini-Hochberg
  bool force = false;                // compare pairs whose keys differ, saying so
  bool fail_on_improvement = false;  // exit 1 on a significant improvement too
  bool exclude_throttled = false;    // leave repetitions on a throttled GPU out
};

// The speedup of a point against its run's 1-rank point of the same other axes (train runs).
struct ScalingCompare {
  int ranks = 1;
  ScalingChange change;
};

struct PointCompare {
  std::string label;  // "cpu batch=32 ranks=2", or a micro-benchmark's name
  std::map<std::string, std::string> axes;
  std::string baseline_key, candidate_key;                // "" where the run has no such point
  std::vector<double> baseline_values, candidate_values;  // seconds, one per repetition
  PointComparison result;  // the verdict, change, test; `reason` when incomparable
  bool forced = false;     // keys differ, compared under --force
  std::optional<ScalingCompare> scaling;
  // Train points where NVML measured energy: joules per sample of each run (median).
  std::optional<double> baseline_joules_per_sample, candidate_joules_per_sample;
};

struct RunCompare {
  RunRecord baseline, candidate;
  std::string baseline_status, candidate_status;  // effectiveStatus
  RegressionThresholds thresholds;
  bool forced = false;
  std::vector<std::string> notes;  // why runs or points are incomparable, forced, incomplete
  std::vector<PointCompare> points;
  int skipped_in_both = 0;  // planned skips (no GPU here, ...) on both sides: not listed
  bool incomplete = false;  // a run that did not complete, or a point missing on one side
  int exit_code = 0;        // 0 same, 1 regression, 3 incomplete or incomparable
  int count(Verdict verdict) const;
};

// Throws BadInput for a run that does not exist.
RunCompare compareRuns(const Store& store, int64_t baseline, int64_t candidate,
                       const CompareOptions& options);

// One value per repetition of a stored point (seconds), as described above.
std::vector<double> repetitionValues(const Store& store, const PointRecord& point,
                                     const std::string& kind, const SummaryOptions& options = {});

// The thresholds a run's resolved configuration sets ([compare]), over the defaults.
RegressionThresholds runThresholds(const RunRecord& run);

// What differs between two runs' machines ("gpus: 1 x NVIDIA H100 vs 2 x NVIDIA H100"), or "".
std::string machineDifference(const RunRecord& a, const RunRecord& b);

}  // namespace synk::harness
