#pragma once
// Where a training point's step time goes, rank by rank (experiment.step_times, stored per
// repetition, timed step and rank in rank_times): medians over every timed step, and a
// straggler, if one rank's own work holds the others back.
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/records/records.h"

namespace synk::harness {

struct RankTimesSummary {
  int rank = 0;
  double work_s = 0;               // the model's function (on a GPU: issuing its work)
  std::optional<double> device_s;  // its work on the GPU
  double path_s = 0;               // the runtime's path
  double wait_s = 0;               // waiting for the other ranks
  double step_s = 0;               // the step, whole
};

struct Straggler {
  int rank = 0;
  double slowest_share = 0;  // of the steps in which its work took longest
  double excess = 0;         // its median work / the others' median work - 1
  double work_s = 0;         // its median work
  double others_s = 0;       // the other ranks' median work
};

// One timed step as every rank spent it: what the HTML report's timeline draws.
struct TimelineStep {
  std::string which;  // "median step" or "slowest step" (of the median repetition)
  int repetition = 0;
  int step = 0;
  double step_s = 0;                   // the step of its slowest rank
  std::vector<RankTimesRecord> ranks;  // rank order
};

struct StepTimesSummary {
  std::vector<RankTimesSummary> ranks;  // rank order
  std::optional<Straggler> straggler;
  std::vector<TimelineStep> timeline;  // timelineSteps(): the steps a report draws
};

// A rank is a straggler when its work (the device's where measured, else the host's) is the
// longest of the step in at least kStragglerShare of the steps and its median exceeds the other
// ranks' median by kStragglerExcess: consistently slower, not once.
inline constexpr double kStragglerShare = 0.75;
inline constexpr double kStragglerExcess = 0.10;

// Nothing for points without step times (recorded without them, or split steps).
std::optional<StepTimesSummary> summarizeStepTimes(const std::vector<RankTimesRecord>& times);
// The steps that stand for a point: in its median repetition (the one whose median step is the
// median of the repetitions' medians, the lower one of an even count), the median step and the
// slowest step (one entry when it is no slower than the median one). A step's time is its slowest
// rank's.
std::vector<TimelineStep> timelineSteps(const std::vector<RankTimesRecord>& times);
// "rank 1 is a straggler: its work took longest in 100 % of the steps (median 3.08 ms against
// the others' 972 ns)"
std::string stragglerText(const Straggler& straggler);

}  // namespace synk::harness
