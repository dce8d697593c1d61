#pragma once
// Internal: the master's steps that move no data (Session::barrier, synchronize, lastStepTimes).
// Every rank's side is a handler in SessionCore (BarrierHandler, SynchronizeHandler).
#include <vector>

#include "synk/core/session.h"

namespace synk::detail {

class SessionLifecycle;
class StepRunner;

class SyncMaster {
 public:
  SyncMaster(SessionLifecycle& life, StepRunner& steps) : life_(life), steps_(steps) {}

  // One barrier round trip through every rank.
  void barrier();
  // One step in which every rank waits for its device (Session::synchronize).
  void synchronize();
  // Every rank's times in the last step (ForkOptions::step_times; Session::lastStepTimes).
  std::vector<RankStepTimes> lastStepTimes();

 private:
  SessionLifecycle& life_;
  StepRunner& steps_;
};

}  // namespace synk::detail
