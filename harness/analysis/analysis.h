#pragma once
// Stage 5 (with stats.h): what a report shows, computed from stored records by pure functions.
//
// A point's step time is the median of its repetition medians (each repetition is a fresh
// session; its median over steps summarises it), so one slow session counts once, not once per
// step. Speedup compares a point with the 1-rank point of the same other axes that processes
//   weak scaling   (default): the same per-rank batch   S = N * t1 / tN,
//   strong scaling:           the same global batch      S = t1 / tN,
// efficiency is S / N, and the 95 % interval is a percentile bootstrap over both points'
// repetition medians with a seed derived from the two points' keys (stats.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/analysis/step_times.h"
#include "synk/harness/config/config.h"
#include "synk/harness/records/records.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {

struct PointSummary {
  std::vector<double> repetition_medians;         // seconds
  double step_s = 0;                              // median of repetition_medians
  std::optional<double> compute_s, collective_s;  // medians, where the step splits them
  std::optional<double> startup_s;                // median session start-up
  size_t samples = 0;
  // The values the point's spread is over (seconds): a train point's repetition medians; a
  // collectives point's slowest-rank times, one per repetition back to back, one per iteration
  // per iteration. Their mean, sigma, min, max and quartiles beside the median.
  std::vector<double> values;
  Summary spread;
  std::optional<double> other_cpu;    // CPUs other processes kept busy (mean of repetitions)
  std::vector<std::string> warnings;  // noise.h: two groups, outliers, contention
  // GPU telemetry (NVML), medians over the repetitions that have it: energy of every GPU the
  // point used per timed step (train) or iteration (collectives), their summed power, their
  // mean SM clock; how many repetitions throttled and how many were left out for it.
  std::optional<double> energy_per_step_j, power_w, sm_mhz;
  double energy_min_j = 0, energy_max_j = 0;    // per step, over the repetitions
  double startup_min_s = 0, startup_max_s = 0;  // over the repetitions
  int gpu_repetitions = 0, throttled_repetitions = 0, excluded_repetitions = 0;
};

struct SummaryOptions {
  int rank = 0;  // whose samples time whole steps (the master's)
  // Leave repetitions during which a GPU throttled out of every statistic (--exclude-throttled).
  bool exclude_throttled = false;
};

// Uses the samples of the master's clock: rank `options.rank` (the sweep stores whole steps
// there). Repetitions that carry their own value (RepetitionRecord::value) are summarised by it.
PointSummary summarizePoint(const std::vector<SampleRecord>& samples,
                            const std::vector<RepetitionRecord>& repetitions,
                            const SummaryOptions& options = {});
// The repetitions during which some GPU throttled (GpuReading::throttled).
std::vector<int> throttledRepetitions(const std::vector<RepetitionRecord>& repetitions);

// For collectives: per timed iteration, the slowest rank's time; its median over iterations and
// repetitions, in seconds.
double slowestRankMedian(const std::vector<SampleRecord>& samples);
// The same per repetition, in repetition order: a collectives point's values for `compare`.
std::vector<double> slowestRankRepetitionMedians(const std::vector<SampleRecord>& samples);
// Per (repetition, iteration), the slowest rank's time in seconds, in that order.
std::vector<double> slowestRankTimes(const std::vector<SampleRecord>& samples);

struct ScalingRow {
  const PointRecord* point = nullptr;
  int ranks = 1;
  int64_t batch = 0;  // the batch axis value
  int64_t rows = 0;   // global rows per step
  double step_s = 0;
  double samples_per_s = 0;
  std::optional<double> speedup, efficiency;
  std::optional<Interval> speedup_ci;
  std::optional<double> compute_s, collective_s, startup_s;
  // Energy where NVML measured it: joules per sample and samples per joule, and the energy
  // scaling against the reference point: J/sample at 1 rank / J/sample here (1 = every sample
  // costs what it cost on one GPU).
  std::optional<double> joules_per_sample, samples_per_joule, energy_scaling;
};

struct AnalysedPoint {
  PointRecord record;
  PointSummary summary;
  std::optional<StepTimesSummary> step_times;  // rank by rank (experiment.step_times)
};

// Rows in the points' order (only points with samples get numbers). `run_scaling` is how the run
// defined its batch axis; `report_scaling` how speedup is computed.
std::vector<ScalingRow> scalingRows(const std::vector<AnalysedPoint>& points, Scaling run_scaling,
                                    Scaling report_scaling);

// The scaling a run was configured with (its resolved config's experiment.scaling).
Scaling runScaling(const RunRecord& run);

}  // namespace synk::harness
