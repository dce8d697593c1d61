#include "synk/core/phase_clock.h"

#include <array>
#include <cstdlib>
#include <cstring>

#include "synk/core/log.h"

namespace synk {
namespace phase_detail {

bool g_on = false;
bool g_steps = false;
StepTimes g_step;

namespace {
struct Totals {
  std::array<uint64_t, static_cast<size_t>(Phase::kCount)> count{};
  std::array<int64_t, static_cast<size_t>(Phase::kCount)> nanos{};
};
Totals g_totals;
PhaseForward g_forward = nullptr;
}  // namespace

void add(Phase phase, std::chrono::steady_clock::duration elapsed) noexcept {
  const auto i = static_cast<size_t>(phase);
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  if (g_forward != nullptr) return g_forward(static_cast<int>(phase), ns);
  if (g_steps) g_step.ns[i] += ns;
  if (!g_on) return;
  ++g_totals.count[i];
  g_totals.nanos[i] += ns;
}

void forwardTo(bool on, bool steps, PhaseForward to) noexcept {
  g_on = on;
  g_steps = steps;
  g_forward = to;
}

}  // namespace phase_detail

void initPhaseClock(bool step_times) {
  const char* value = std::getenv("SYNK_PHASES");
  phase_detail::g_on = value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  phase_detail::g_steps = step_times;
}

void reportPhases() noexcept {
  if (!phase_detail::g_on) return;
  static constexpr const char* kNames[] = {"step start",  "handler", "inputs", "plugin",
                                           "output copy", "agree",   "finish", "device wait",
                                           "collective",  "step end"};
  static_assert(std::size(kNames) == static_cast<size_t>(Phase::kCount));
  auto& totals = phase_detail::g_totals;
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (totals.count[i] == 0) continue;
    // Asked for explicitly (SYNK_PHASES): written at warning level, which passes by default.
    logWarning("phase ", kNames[i], ": ", totals.count[i], " x ",
               double(totals.nanos[i]) / double(totals.count[i]) * 1e-3, " us");
  }
  totals = {};
}

}  // namespace synk
