#pragma once
// Stage 3 for collectives experiments: one repetition of a job (every point of one backend and
// rank count), run in a child process that becomes rank 0 of a process group whose ranks each
// build the backend exactly as a session does (ShmHeap, BackendFactory::create) and measure
// the collectives on its Device and Communicator: nccl-tests' level, no session step around
// each call.
#include <vector>

#include "synk/harness/base/child.h"
#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/run/outcome.h"

namespace synk::harness {

// `telemetry_gpus`: the CUDA ordinals whose NVML telemetry each point records over its timed
// iterations (gpu_telemetry.h); empty for none.
// `points_done`, when given, counts the points measured so far (for the progress line).
JobOutcome runCollectivesRepetition(const Experiment& experiment,
                                    const std::vector<const Point*>& points, int repetition,
                                    const StopWord& stop,
                                    const std::vector<int>& telemetry_gpus = {},
                                    SharedCounter* points_done = nullptr);

}  // namespace synk::harness
