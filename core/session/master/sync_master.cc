// SyncMaster (sync_master.h): the master's steps that move no data.
#include "synk/core/session/master/sync_master.h"

#include "synk/core/error.h"
#include "synk/core/phase_clock.h"
#include "synk/core/session/master/lifecycle.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

void SyncMaster::barrier() {
  life_.runStep(Opcode::Barrier, ByteWriter(), "barrier");
}

void SyncMaster::synchronize() {
  life_.runStep(Opcode::Synchronize, ByteWriter(), "synchronize");
}

std::vector<RankStepTimes> SyncMaster::lastStepTimes() {
  life_.ensureOpen();
  if (!life_.options().step_times) {
    throw UsageError("lastStepTimes: the session was forked without ForkOptions::step_times");
  }
  // A rank publishes within microseconds of the step's end; a second is a generous bound.
  const std::vector<StepTimes> times = steps_.lastStepTimes(std::chrono::seconds(1));
  std::vector<RankStepTimes> out;
  for (size_t r = 0; r < times.size(); ++r) {
    const auto& ns = times[r].ns;
    auto at = [&](Phase p) { return ns[static_cast<size_t>(p)]; };
    RankStepTimes t;
    t.rank = static_cast<int>(r);
    t.start_ns = at(Phase::StepStart);
    t.inputs_ns = at(Phase::Inputs);
    t.plugin_ns = at(Phase::Plugin);
    t.device_ns = times[r].device_ns;
    t.output_copy_ns = at(Phase::OutputCopy);
    t.agree_ns = at(Phase::Agree);
    t.finish_ns = at(Phase::Finish);
    t.device_wait_ns = at(Phase::DeviceWait);
    t.collective_ns = at(Phase::Collective);
    t.end_ns = at(Phase::StepEnd);
    t.step_ns = at(Phase::Handler);
    t.window_all_reduces = times[r].window_all_reduces;
    out.push_back(t);
  }
  return out;
}

}  // namespace synk::detail
