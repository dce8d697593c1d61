#pragma once
// The HTML report's step timeline, rank by rank (experiment.step_times; the peers: Horovod's
// timeline, PyTorch profiler's trace view). Per training point with rank times: the median and
// the slowest step of its median repetition (analysis/step_times.h, timelineSteps), one lane a
// rank, its work (the longer of the host's and the device's), the runtime's path and its wait for
// the other ranks laid end to end, each segment's microseconds in its hover title, the straggler
// outlined; beside it the table of per-rank medians over every timed step.
#include <string>

#include "synk/harness/analysis/report_data.h"

namespace synk::harness {

// <section id="timeline">, or "" when no point has rank times.
std::string rankTimelineSection(const RunData& data);

// One step's lanes (chart id `id`), the straggler's rank marked (-1: none).
std::string stepTimelineChart(const std::string& id, const std::string& point,
                              const TimelineStep& step, int straggler);

}  // namespace synk::harness
