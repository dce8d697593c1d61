#pragma once
// Console reports: the run list, a run's context, its scaling table, and for collectives runs
// nccl-tests' table (collectives_table.h).
#include <cstdio>
#include <vector>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/config/config.h"

namespace synk::harness {

// One line per run, newest first: id, start, status, experiment, tag, points, commit.
void printRunList(std::FILE* out, const Store& store);

// The stored context: where and how it ran.
void printRunContext(std::FILE* out, const RunData& data);

// ranks, batch, median step time, samples/s, speedup with its 95 % interval, efficiency; every
// other axis that varies gets a column; skipped and failed points show their reason.
void printScalingTable(std::FILE* out, const RunData& data, Scaling scaling);
// Imported micro-benchmarks: per benchmark, the median, min and max over repetitions.
void printMicroTable(std::FILE* out, const RunData& data);
// Where each training point's step time goes, rank by rank, and its stragglers
// (experiment.step_times); nothing where no point has step times.
void printStepTimes(std::FILE* out, const RunData& data);

// "1.25 mJ", "2.10 J"
std::string formatJoules(double joules);
// "1.23 ms ± 45.6 us" (mean and sample standard deviation; the mean alone for one value).
std::string meanSigmaText(const Summary& spread);
// "warning: ..." lines, each starting with `prefix`: the machine's load when the run began, and
// every point's noise warnings (noise.h).
void printWarnings(std::FILE* out, const RunData& data, const char* prefix);

// The right table for the run's kind.
void printRunTable(std::FILE* out, const RunData& data, Scaling scaling);

}  // namespace synk::harness
