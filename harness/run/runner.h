#pragma once
// Stage 3: one repetition of a train point, run inside a child process (child.h), which becomes
// the session's master: fork the ranks, load the plugin with the point's model options, build
// the synthetic inputs, warm up, time every step on the master's clock, then check that every
// variable is identical on every rank (nccl-tests' #wrong, for training).
//
// A step is the config's actions in order: function calls, and all_reduce(VAR) actions that
// average a variable through the point's collectives (NCCL or host-staged). When a step has
// both, each sample also records the time spent in calls (compute) and in all_reduce actions
// (collective); a single fused call cannot be split from outside. On a GPU an all_reduce is
// queued on the stream and returns early, so its wait shows in the next call's time: the split
// is exact on CPU ranks and approximate on GPUs.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "synk/harness/base/child.h"
#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/run/outcome.h"

namespace synk::harness {

// Where a plugin named in a config is: a path (has a '/' or ends in .so) as given, else
// lib<name>.so in the lib/ directory beside this executable's bin/ (synk::pluginPath).
std::string resolvePlugin(const std::string& plugin);

// Runs in a child: fails with BadInput's message when the plugin cannot be loaded with the
// experiment's model options, a step function or variable does not exist, or an input is not
// described as the function declares it. Returns "" when the experiment can run.
std::string validateTrainExperiment(const Experiment& experiment, const Point& point,
                                    const std::string& plugin_path);

// The timing loop every train point runs, and all the harness adds to a step it times: warm-up
// steps, then timed steps until both the count and the minimum time are reached (never more
// than max_steps), checking the stop word between steps. The clock is read once per step: a
// step's time runs from the end of the one before (the loop's own bookkeeping, a few ns, lands in
// the next sample rather than costing a second clock read). `step` runs one step; where it splits
// the step into compute and collectives it fills those fields, timing from `start`. Returns the
// timed phase's wall time in nanoseconds.
struct TimingPlan {
  int warmup = 5;
  double warmup_time = 0;
  int steps = 20;
  double min_time = 0;
  int max_steps = 1000000;
};
using StepFunction =
    std::function<void(SampleRecord& sample, std::chrono::steady_clock::time_point start)>;
TimingPlan timingPlan(const Experiment& experiment);
// `at_timed_start`, when given, runs between the warm-up and the first timed step (outside any
// step's time): where the GPU telemetry's first reading is taken.
// `after_step`, when given, runs after each timed step, outside its time (and the next's).
int64_t timeSteps(const StepFunction& step, const TimingPlan& plan, const StopWord& stop,
                  std::vector<SampleRecord>& samples,
                  const std::function<void()>& at_timed_start = {},
                  const std::function<void(const SampleRecord&)>& after_step = {});

// timeSteps with the NVML telemetry of `telemetry_gpus` (CUDA ordinals, gpu_telemetry.h; none
// when empty) over exactly its timed phase: NVML loads on a thread while the warm-up runs, the
// first read is taken after the last warm-up step and the last read after the last timed step,
// both outside every step's time. `gpus` gets one reading per GPU; nothing when NVML is absent
// or the stop word ended the phase.
int64_t timeStepsWithTelemetry(const StepFunction& step, const TimingPlan& plan,
                               const StopWord& stop, const std::vector<int>& telemetry_gpus,
                               std::vector<SampleRecord>& samples, std::vector<GpuReading>& gpus,
                               const std::function<void(const SampleRecord&)>& after_step = {});

// Whether a point runs without experiment.step_times although the experiment asks for them: over
// several nodes, where the ranks' step times do not travel to the master (ForkOptions refuses
// them there).
bool stepTimesLeftOff(const Point& point);

// `telemetry_gpus`: the CUDA ordinals whose NVML telemetry the repetition records over its
// timed steps (timeStepsWithTelemetry); empty for none.
JobOutcome runTrainRepetition(const Experiment& experiment, const Point& point, int repetition,
                              const std::string& plugin_path, const StopWord& stop,
                              const std::vector<int>& telemetry_gpus = {});

}  // namespace synk::harness
