#pragma once
// How long a plan will take, from earlier runs of the same points in a database (`synk-bench
// plan --db`): what hyperfine and nvbench print before they start, without measuring anything
// here. A point is known when a stored point has its comparability key (same experiment,
// options, axes and kind of machine): per repetition its session start-up plus (warm-up + timed
// steps, as configured now) times its median step (a collectives point: its iterations and
// checks times its time, the job's start-up once per repetition). Points never measured on
// this kind of machine are counted, not guessed.
#include <string>

#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

struct PlanEstimate {
  double seconds = 0;  // for the known points
  int known = 0, unknown = 0;
  // "about 1:05 for 6 of 8 runnable points (earlier runs in results/synk.db); 2 never measured
  // on this kind of machine", or why there is no estimate.
  std::string describe(const std::string& db) const;
};

PlanEstimate estimatePlan(const Experiment& experiment, const Plan& plan, const Store& store);

}  // namespace synk::harness
