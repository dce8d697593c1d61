#pragma once
// A run and its points' summaries as JSON, the one vocabulary `export --json` and the static
// site's data share (schema "synk-bench-export/1", documented in export.h).
#include <string>
#include <vector>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/analysis/report_data.h"
#include "synk/harness/base/json.h"

namespace synk::harness {

// The run's context: every column of `run`, numbers as numbers.
OrderedJson runJson(const RunData& data);

// Per point: its statistics (median, mean, stdev, min, q1, q3, max over `summary.values`, in
// seconds), what they are over, the rates (train: samples/s, speedup with its interval,
// efficiency; collectives: algbw and busbw in GB/s), other processes' CPU use, energy where
// NVML measured it, and the noise warnings. `rows` are scalingRows of the run (train), empty
// otherwise.
OrderedJson pointSummaryJson(const RunData& data, size_t point,
                             const std::vector<ScalingRow>& rows);

// A repetition as stored: start-up, steps, status, other CPUs, per-GPU telemetry.
OrderedJson repetitionJson(const RepetitionRecord& repetition);

}  // namespace synk::harness
