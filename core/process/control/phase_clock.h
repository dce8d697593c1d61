#pragma once
// Internal: opt-in accounting of where a rank's steps spend their time. With SYNK_PHASES=1 in the
// environment each rank counts and times every phase below, and logs one line per phase with its
// count and mean when the session's resources are released (close, or a worker's exit). With
// ForkOptions::step_times each rank also keeps the phases of the step it runs, which the step
// runner publishes after the step for Session::lastStepTimes. Off (the default) a phase costs
// one predictable branch and a clock read is never made.
#include <array>
#include <chrono>
#include <cstdint>

namespace synk {

enum class Phase : int {
  StepStart,   // arriving at a step's CommandStart barrier (the master: waiting for workers)
  Handler,     // a step's handler, whole
  Inputs,      // a call's inputs onto the device (copies issued, broadcast inputs included)
  Plugin,      // the plugin's function (issuing its work)
  OutputCopy,  // small outputs copied out for the agreement exchange, and waited for
  Agree,       // the agreement exchange (a barrier) and its bookkeeping
  Finish,      // updates applied, outputs reduced onto the master
  DeviceWait,  // Device::synchronize
  Collective,  // a collective issued by a collective step
  StepEnd,     // arriving at CommandEnd (waiting for the slowest rank)
  kCount
};

// One step's phases on one rank, in nanoseconds; device_ns: the span of the call's plugin work on
// the device (-1: none measured, as on the host device); window_all_reduces: the call's
// all-reduces that ran in a window (core/step/call_windows.cc).
struct StepTimes {
  std::array<int64_t, static_cast<size_t>(Phase::kCount)> ns{};
  int64_t device_ns = -1;
  int64_t window_all_reduces = 0;
};

namespace phase_detail {
// Set before the ranks fork; a host link (core/host_link.h) sets them too.
extern bool g_on;     // SYNK_PHASES
extern bool g_steps;  // ForkOptions::step_times
extern StepTimes g_step;
void add(Phase phase, std::chrono::steady_clock::duration elapsed) noexcept;
// Takes the switches and sends every phase timed here to `to` instead of counting it here: a
// backend module's copy of synk counts in the program's (core/host_link.h). Null: here.
using PhaseForward = void (*)(int phase, int64_t nanoseconds);
void forwardTo(bool on, bool steps, PhaseForward to) noexcept;
}  // namespace phase_detail

inline bool phaseClockOn() {
  return phase_detail::g_on || phase_detail::g_steps;
}
inline bool stepTimesOn() {
  return phase_detail::g_steps;
}
// Reads SYNK_PHASES and takes the session's step_times; called once by fork() before any rank
// starts.
void initPhaseClock(bool step_times);
// The step this rank runs now: zeroed when a step starts (StepRunner).
inline StepTimes& currentStepTimes() {
  return phase_detail::g_step;
}
inline void beginStepTimes() {
  phase_detail::g_step = StepTimes{};
}
// Logs this rank's phases (if on and any was counted) and clears them.
void reportPhases() noexcept;

class PhaseScope {
 public:
  explicit PhaseScope(Phase phase) : phase_(phase) {
    if (phaseClockOn()) start_ = std::chrono::steady_clock::now();
  }
  ~PhaseScope() {
    if (phaseClockOn()) phase_detail::add(phase_, std::chrono::steady_clock::now() - start_);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase phase_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace synk
