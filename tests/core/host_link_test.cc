// core/host_link.h: a copy of synk linked to another's (a backend module's copy to the
// program's) writes its log messages and times its phases through the other's functions, with the
// other's threshold and switches; a link to itself writes here. The "other copy" is played by
// recording functions.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "synk/core/host_link.h"
#include "synk/core/log.h"
#include "synk/core/phase_clock.h"

namespace synk {
namespace {

struct Received {
  std::vector<std::pair<int, std::string>> messages, lines;
  std::vector<int> phases;
};
Received g_received;

void recordMessage(int level, const char* text, size_t length) {
  g_received.messages.emplace_back(level, std::string(text, length));
}
void recordLine(int level, const char* text, size_t length) {
  g_received.lines.emplace_back(level, std::string(text, length));
}
void recordPhase(int phase, int64_t nanoseconds) {
  CHECK(nanoseconds >= 0);
  g_received.phases.push_back(phase);
}

// Restores this copy's own link (threshold, switches, writing here) when the test ends.
class SavedLink {
 public:
  SavedLink() : saved_(hostLink()) {}
  ~SavedLink() { useHostLink(saved_); }

 private:
  SynkHostLink saved_;
};

SynkHostLink otherCopy(bool phases_on, bool step_times_on = false) {
  return {.log_threshold = int(LogLevel::Error),  // not this copy's: the other copy filters
          .log_message = &recordMessage,
          .log_line = &recordLine,
          .phases_on = phases_on ? 1 : 0,
          .step_times_on = step_times_on ? 1 : 0,
          .phase_add = &recordPhase};
}

}  // namespace

TEST_CASE("host link: a linked copy logs and times its phases through the other copy", "[core]") {
  SavedLink saved;
  g_received = {};
  std::vector<std::string> here;
  ScopedLogSink sink([&](LogLevel, std::string_view line) { here.emplace_back(line); });
  useHostLink(otherCopy(true));

  logWarning("rank ", 1, ": the stream did not drain");
  logInfo("an info message");
  logDebug("a debug message");  // the other copy's threshold decides
  logLine(LogLevel::Warning, "plugin[mlp]: its own prefix");
  { PhaseScope phase(Phase::DeviceWait); }

  // Without a prefix: the other copy adds the one that names its rank.
  CHECK(g_received.messages == std::vector<std::pair<int, std::string>>{
                                   {int(LogLevel::Warning), "rank 1: the stream did not drain"},
                                   {int(LogLevel::Info), "an info message"},
                                   {int(LogLevel::Debug), "a debug message"}});
  CHECK(g_received.lines == std::vector<std::pair<int, std::string>>{
                                {int(LogLevel::Warning), "plugin[mlp]: its own prefix"}});
  CHECK(g_received.phases == std::vector<int>{int(Phase::DeviceWait)});
  CHECK(here.empty());  // nothing was written by this copy

  SECTION("the other copy's switches off: nothing is timed") {
    useHostLink(otherCopy(false));
    { PhaseScope phase(Phase::DeviceWait); }
    CHECK(g_received.phases.size() == 1);
  }
  SECTION("step times alone on (ForkOptions::step_times): the phase is timed") {
    useHostLink(otherCopy(false, true));
    { PhaseScope phase(Phase::Collective); }
    CHECK(g_received.phases == std::vector<int>{int(Phase::DeviceWait), int(Phase::Collective)});
  }
}

TEST_CASE("host link: a link to this very copy writes here", "[core]") {
  SavedLink saved;
  g_received = {};
  std::vector<std::string> here;
  ScopedLogSink sink([&](LogLevel, std::string_view line) { here.emplace_back(line); });
  setLogThreshold(LogLevel::Warning);
  SynkHostLink self = hostLink();
  useHostLink(otherCopy(false));
  useHostLink(self);  // a statically linked backend links the program to itself
  logWarning("written here");
  logInfo("below this copy's threshold, restored");
  CHECK(g_received.messages.empty());
  REQUIRE(here.size() == 1);
  CHECK(here[0] == logPrefix() + "written here");
}

TEST_CASE("host link: the program's phase adder counts in the step's times", "[core]") {
  SavedLink saved;
  SynkHostLink self = hostLink();
  self.step_times_on = 1;  // as a session forked with ForkOptions::step_times
  useHostLink(self);
  beginStepTimes();
  self.phase_add(int(Phase::DeviceWait), 5);
  self.phase_add(int(Phase::DeviceWait), 7);
  CHECK(currentStepTimes().ns[size_t(Phase::DeviceWait)] == 12);
}

}  // namespace synk
