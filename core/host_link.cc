#include "synk/core/host_link.h"

#include <chrono>
#include <string_view>

#include "synk/core/log.h"
#include "synk/core/phase_clock.h"

namespace synk {
namespace {

void hostLogMessage(int level, const char* text, size_t length) {
  logMessage(static_cast<LogLevel>(level), std::string_view(text, length));
}

void hostLogLine(int level, const char* text, size_t length) {
  logLine(static_cast<LogLevel>(level), std::string_view(text, length));
}

void hostPhaseAdd(int phase, int64_t nanoseconds) {
  phase_detail::add(static_cast<Phase>(phase), std::chrono::nanoseconds(nanoseconds));
}

}  // namespace

SynkHostLink hostLink() {
  return {.log_threshold = static_cast<int>(logThreshold()),
          .log_message = &hostLogMessage,
          .log_line = &hostLogLine,
          .phases_on = phase_detail::g_on ? 1 : 0,
          .step_times_on = phase_detail::g_steps ? 1 : 0,
          .phase_add = &hostPhaseAdd};
}

void useHostLink(const SynkHostLink& link) {
  const bool here = link.log_message == &hostLogMessage;
  // Linked elsewhere, this copy lets every message through and the other copy filters: a
  // threshold the program changes later (setLogThreshold) then holds for the module's messages
  // too. A link to this copy restores its own threshold.
  setLogThreshold(here ? static_cast<LogLevel>(link.log_threshold) : LogLevel::Debug);
  setLogForward(here ? nullptr : link.log_message, here ? nullptr : link.log_line);
  phase_detail::forwardTo(link.phases_on != 0, link.step_times_on != 0,
                          here ? nullptr : link.phase_add);
}

}  // namespace synk
