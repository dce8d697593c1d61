#pragma once
// A whole run: the plan's jobs one after another, each repetition in a fresh child process
// (child.h), each point stored in its own transaction as soon as its job is done. Skipped
// points are stored with their reason; a failed point becomes a row with its reason and the
// sweep goes on. Ctrl-C stops within one step: finished points stay, the run is marked
// interrupted.
#include <cstdint>
#include <string>

#include "synk/harness/config/config.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

struct SweepOptions {
  std::string tag;
  std::string command_line;
};

// A run's status: complete (every runnable point ran and was right), failed (a point failed or
// was wrong), interrupted (Ctrl-C: points not run), with a message that counts them.
struct SweepSummary {
  int64_t run_id = 0;
  std::string status;  // complete | failed | interrupted
  int ok = 0, wrong = 0, failed = 0, skipped = 0;
  int not_run = 0;  // runnable points not stored: cut short, or never started
  bool allOk() const { return status == "complete"; }
  // "2 ok, 1 failed, 3 skipped, 4 not run": the counts that are not zero ("" when all ran ok).
  std::string describe() const;
};

// Checks, before anything is stored, that a train experiment's plugin loads with its options and
// declares its step's functions, variables and inputs as configured (in a child process, on one
// CPU rank). Throws BadInput naming what is wrong.
void validateExperiment(const Experiment& experiment, const Plan& plan);

// Runs the plan into `store`. Throws RunFailed (after marking the run failed where the store
// still takes it) when the store fails.
SweepSummary runSweep(const Experiment& experiment, const Plan& plan, const MachineContext& machine,
                      Store& store, const SweepOptions& options);

}  // namespace synk::harness
