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
  if (nanoseconds >= 0) g_received.phases.push_back(phase);
}

// Restores this copy's own link (threshold, switches, writing here) when the test ends.
class SavedLink {
 public:
  SavedLink() : saved_(hostLink()) {}
  ~SavedLink() { useHostLink(saved_); }

 private:
  SynkHostLink saved_;
};

SynkHostLink otherCopy(LogLevel threshold, bool phases_on) {
  return {
      static_cast<int>(threshold), &recordMessage, &recordLine, phases_on ? 1 : 0, 0, &recordPhase};
}

}  // namespace

TEST_CASE("host link: a linked copy logs and times its phases through the other copy", "[core]") {
  SavedLink saved;
  g_received = {};
  std::vector<std::string> here;
  ScopedLogSink sink([&](LogLevel, std::string_view line) { here.emplace_back(line); });
  useHostLink(otherCopy(LogLevel::Info, true));

  logWarning("rank ", 1, ": the stream did not drain");
  logInfo("an info message");
  logDebug("below the other copy's threshold");
  logLine(LogLevel::Warning, "plugin[mlp]: its own prefix");
  { PhaseScope phase(Phase::DeviceWait); }

  // Without a prefix: the other copy adds the one that names its rank.
  CHECK(g_received.messages == std::vector<std::pair<int, std::string>>{
                                   {int(LogLevel::Warning), "rank 1: the stream did not drain"},
                                   {int(LogLevel::Info), "an info message"}});
  CHECK(g_received.lines == std::vector<std::pair<int, std::string>>{
                                {int(LogLevel::Warning), "plugin[mlp]: its own prefix"}});
  CHECK(g_received.phases == std::vector<int>{int(Phase::DeviceWait)});
  CHECK(here.empty());  // nothing was written by this copy

  SECTION("the other copy's phase switch off: nothing is timed") {
    useHostLink(otherCopy(LogLevel::Info, false));
    { PhaseScope phase(Phase::DeviceWait); }
    CHECK(g_received.phases.size() == 1);
  }
}

TEST_CASE("host link: a link to this very copy writes here", "[core]") {
  SavedLink saved;
  g_received = {};
  std::vector<std::string> here;
  ScopedLogSink sink([&](LogLevel, std::string_view line) { here.emplace_back(line); });
  useHostLink(otherCopy(LogLevel::Warning, false));
  SynkHostLink self = hostLink();
  CHECK(self.log_threshold == int(LogLevel::Warning));  // the threshold it was given
  useHostLink(self);  // a statically linked backend links the program to itself
  logWarning("written here");
  CHECK(g_received.messages.empty());
  REQUIRE(here.size() == 1);
  CHECK(here[0] == logPrefix() + "written here");
}

}  // namespace synk
