#include "synk/core/log.h"

#include <unistd.h>

#include <strings.h>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

namespace synk {
namespace {

constexpr int kUnset = -1;
constexpr LogLevel kDefaultThreshold = LogLevel::Warning;

std::atomic<int> g_threshold{kUnset};
std::atomic<int> g_rank{kLogNoSession};
std::atomic<LogForward> g_forward_message{nullptr};
std::atomic<LogForward> g_forward_line{nullptr};

// The sink is a test's hook: stderr, the normal case, takes no lock (a lock held by another
// thread at fork() would stay held forever in the child).
std::atomic<bool> g_has_sink{false};
std::mutex g_sink_mutex;
LogSink g_sink;

void writeStderr(std::string_view line) {
  std::string buffer;
  buffer.reserve(line.size() + 1);
  buffer.append(line);
  buffer.push_back('\n');
  const char* at = buffer.data();
  size_t left = buffer.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report that stderr failed
    at += n;
    left -= static_cast<size_t>(n);
  }
}

void emit(LogLevel level, std::string_view line) {
  if (g_has_sink.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    if (g_sink) {
      g_sink(level, line);
      return;
    }
  }
  writeStderr(line);
}

}  // namespace

const char* logLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::Error:
      return "error";
    case LogLevel::Warning:
      return "warning";
    case LogLevel::Info:
      return "info";
    case LogLevel::Debug:
      return "debug";
  }
  return "?";
}

std::optional<LogLevel> parseLogLevel(std::string_view name) {
  for (LogLevel level : {LogLevel::Error, LogLevel::Warning, LogLevel::Info, LogLevel::Debug}) {
    const std::string_view known = logLevelName(level);
    if (name.size() == known.size() && strncasecmp(name.data(), known.data(), name.size()) == 0) {
      return level;
    }
  }
  return std::nullopt;
}

LogLevel logThreshold() {
  const int threshold = g_threshold.load(std::memory_order_relaxed);
  if (threshold != kUnset) return static_cast<LogLevel>(threshold);
  const char* env = std::getenv("SYNK_LOG_LEVEL");
  const std::optional<LogLevel> parsed = env ? parseLogLevel(env) : std::nullopt;
  int expected = kUnset;
  // Stored before the warning below, which asks for the threshold again.
  if (g_threshold.compare_exchange_strong(expected,
                                          static_cast<int>(parsed.value_or(kDefaultThreshold))) &&
      env && !parsed) {
    logWarning("SYNK_LOG_LEVEL='", env, "' is not one of error, warning, info, debug; using ",
               logLevelName(kDefaultThreshold));
  }
  return static_cast<LogLevel>(g_threshold.load(std::memory_order_relaxed));
}

void setLogThresholdFromEnvironment() {
  g_threshold.store(kUnset, std::memory_order_relaxed);
  logThreshold();
}

void setLogThreshold(LogLevel threshold) {
  g_threshold.store(static_cast<int>(threshold), std::memory_order_relaxed);
}

void setLogRank(int rank) {
  g_rank.store(rank, std::memory_order_relaxed);
}

std::string logPrefix() {
  const int rank = g_rank.load(std::memory_order_relaxed);
  if (rank == kLogMaster) return "synk[master]: ";
  if (rank < 0) return "synk: ";
  return str("synk[rank ", rank, "]: ");
}

LogSink setLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  LogSink previous = std::move(g_sink);
  g_sink = std::move(sink);
  g_has_sink.store(static_cast<bool>(g_sink), std::memory_order_release);
  return previous;
}

void setLogForward(LogForward message, LogForward line) {
  g_forward_message.store(message, std::memory_order_release);
  g_forward_line.store(line, std::memory_order_release);
}

void logMessage(LogLevel level, std::string_view message) {
  if (!logEnabled(level)) return;
  if (LogForward forward = g_forward_message.load(std::memory_order_acquire)) {
    return forward(static_cast<int>(level), message.data(), message.size());
  }
  std::string line = logPrefix();
  line.append(message);
  emit(level, line);
}

void logLine(LogLevel level, std::string_view line) {
  if (!logEnabled(level)) return;
  if (LogForward forward = g_forward_line.load(std::memory_order_acquire)) {
    return forward(static_cast<int>(level), line.data(), line.size());
  }
  emit(level, line);
}

}  // namespace synk
