#pragma once
// The library's diagnostics: what it has to say outside an exception (a failed cleanup, a slower
// fallback, a buggy caller), one line per message, on stderr.
//
//   logWarning("the GPU stream did not drain before closing NCCL");
//   -> synk[rank 2]: the GPU stream did not drain before closing NCCL
//
// The prefix names the process: "synk[master]" for the user's process once it forked a session,
// "synk[rank N]" in a worker, "synk" before any session. A message is formatted into one buffer
// and written with one write(2), so lines of ranks sharing a terminal or a pipe never interleave
// (a pipe keeps writes of up to PIPE_BUF bytes whole). Messages above the threshold cost one
// comparison: SYNK_LOG_LEVEL = error | warning | info | debug, read once, warning by default.
// (In a backend module's copy linked to the program's, host_link.h, every message is built and
// the program's threshold filters it: that copy logs only warnings today.)
// A test captures messages by installing a sink (setLogSink, ScopedLogSink).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "synk/core/error.h"

namespace synk {

enum class LogLevel : int { Error = 0, Warning = 1, Info = 2, Debug = 3 };

const char* logLevelName(LogLevel level);
// "error", "warning", "info", "debug" (any case); nullopt for anything else.
std::optional<LogLevel> parseLogLevel(std::string_view name);

// Messages at `threshold` or more severe are written; SYNK_LOG_LEVEL sets it at the first message
// (a value that names no level is reported once and the default kept).
LogLevel logThreshold();
void setLogThreshold(LogLevel threshold);
// Sets the threshold from SYNK_LOG_LEVEL now, as the first message otherwise does.
void setLogThresholdFromEnvironment();
inline bool logEnabled(LogLevel level) {
  return static_cast<int>(level) <= static_cast<int>(logThreshold());
}

// Which process this is, for the prefix: a rank number in a worker, kLogMaster in the master.
inline constexpr int kLogMaster = -1;
inline constexpr int kLogNoSession = -2;
void setLogRank(int rank);
// "synk[rank 2]: ", "synk[master]: ", "synk: ".
std::string logPrefix();

// Receives every message that passes the threshold as its whole line (prefix included, no
// newline) instead of stderr. Returns the sink it replaces; an empty sink restores stderr.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;
LogSink setLogSink(LogSink sink);

// Sends every message and line that passes the threshold to `message` (without a prefix) and
// `line` instead of writing it here: a backend module's copy of synk writes through the program's
// (core/host_link.h). Null: written here again.
using LogForward = void (*)(int level, const char* text, size_t length);
void setLogForward(LogForward message, LogForward line);

// Writes prefix + message as one line when `level` passes the threshold. May throw bad_alloc
// (the log* functions below do not).
void logMessage(LogLevel level, std::string_view message);
// Writes `line` as it is (it carries its own prefix: a plugin's log line).
void logLine(LogLevel level, std::string_view line);

// The message is built (str(...)) only when it will be written. Logging never throws: it runs
// in destructors and noexcept cleanup, where a failed allocation must not end the process.
template <typename... Args>
void logAt(LogLevel level, Args&&... args) noexcept {
  if (!logEnabled(level)) return;
  try {
    logMessage(level, str(std::forward<Args>(args)...));
  } catch (...) {
  }
}
template <typename... Args>
void logError(Args&&... args) noexcept {
  logAt(LogLevel::Error, std::forward<Args>(args)...);
}
template <typename... Args>
void logWarning(Args&&... args) noexcept {
  logAt(LogLevel::Warning, std::forward<Args>(args)...);
}
template <typename... Args>
void logInfo(Args&&... args) noexcept {
  logAt(LogLevel::Info, std::forward<Args>(args)...);
}
template <typename... Args>
void logDebug(Args&&... args) noexcept {
  logAt(LogLevel::Debug, std::forward<Args>(args)...);
}

// Installs a sink for its lifetime and restores the one before (tests).
class ScopedLogSink {
 public:
  explicit ScopedLogSink(LogSink sink) : previous_(setLogSink(std::move(sink))) {}
  ~ScopedLogSink() { setLogSink(std::move(previous_)); }
  ScopedLogSink(const ScopedLogSink&) = delete;
  ScopedLogSink& operator=(const ScopedLogSink&) = delete;

 private:
  LogSink previous_;
};

}  // namespace synk
