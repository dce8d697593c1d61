// core/log.h: levels and the threshold (SYNK_LOG_LEVEL), the rank prefix, the capture hook, a real
// warning path of the library through it, and whole lines from concurrent ranks on one pipe.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "synk/core/log.h"
#include "synk/core/shm_heap.h"
#include "synk/core/shm_segment.h"

namespace synk {
namespace {

struct Captured {
  LogLevel level;
  std::string line;
};

// Captures every message, at the given threshold, for the scope; restores the process's state.
class Capture {
 public:
  explicit Capture(LogLevel threshold, int rank = kLogNoSession)
      : previous_threshold_(logThreshold()), sink_([this](LogLevel level, std::string_view line) {
          lines.push_back({level, std::string(line)});
        }) {
    setLogThreshold(threshold);
    setLogRank(rank);
  }
  ~Capture() {
    setLogThreshold(previous_threshold_);
    setLogRank(kLogNoSession);
  }
  std::vector<Captured> lines;

 private:
  LogLevel previous_threshold_;
  ScopedLogSink sink_;
};

// Counts how often it is formatted.
struct Expensive {
  int* formatted;
  friend std::ostream& operator<<(std::ostream& out, const Expensive& e) {
    ++*e.formatted;
    return out << "expensive";
  }
};

TEST_CASE("log levels by name, in any case, and anything else is no level", "[core]") {
  CHECK(parseLogLevel("error") == LogLevel::Error);
  CHECK(parseLogLevel("WARNING") == LogLevel::Warning);
  CHECK(parseLogLevel("Info") == LogLevel::Info);
  CHECK(parseLogLevel("debug") == LogLevel::Debug);
  CHECK_FALSE(parseLogLevel("warn"));
  CHECK_FALSE(parseLogLevel(""));
  CHECK_FALSE(parseLogLevel("errors"));
  CHECK_FALSE(parseLogLevel("2"));
  CHECK(std::string(logLevelName(LogLevel::Debug)) == "debug");
}

TEST_CASE("log: the threshold filters, and a filtered message is never formatted", "[core]") {
  Capture capture(LogLevel::Warning);
  int formatted = 0;
  logDebug("d ", Expensive{&formatted});
  logInfo("i ", Expensive{&formatted});
  CHECK(formatted == 0);
  logWarning("w ", Expensive{&formatted});
  logError("e ", 42);
  CHECK(formatted == 1);
  REQUIRE(capture.lines.size() == 2);
  CHECK(capture.lines[0].level == LogLevel::Warning);
  CHECK(capture.lines[0].line == "synk: w expensive");
  CHECK(capture.lines[1].level == LogLevel::Error);
  CHECK(capture.lines[1].line == "synk: e 42");

  setLogThreshold(LogLevel::Error);
  logWarning("dropped");
  CHECK(capture.lines.size() == 2);
  setLogThreshold(LogLevel::Debug);
  logDebug("kept");
  CHECK(capture.lines.back().line == "synk: kept");
  logLine(LogLevel::Info, "[synk rank 0 info] model 'raw': as it is");
  CHECK(capture.lines.back().line == "[synk rank 0 info] model 'raw': as it is");
}

TEST_CASE("log: the prefix names the rank, or the master", "[core]") {
  Capture capture(LogLevel::Warning, 2);
  logWarning("from a worker");
  setLogRank(kLogMaster);
  logWarning("from the master");
  REQUIRE(capture.lines.size() == 2);
  CHECK(capture.lines[0].line == "synk[rank 2]: from a worker");
  CHECK(capture.lines[1].line == "synk[master]: from the master");
}

TEST_CASE("log: SYNK_LOG_LEVEL sets the threshold, and a bad value is reported", "[core]") {
  Capture capture(LogLevel::Warning);
  const char* before = std::getenv("SYNK_LOG_LEVEL");
  const std::string saved = before ? before : "";
  setenv("SYNK_LOG_LEVEL", "debug", 1);
  setLogThresholdFromEnvironment();
  CHECK(logThreshold() == LogLevel::Debug);
  setenv("SYNK_LOG_LEVEL", "Error", 1);
  setLogThresholdFromEnvironment();
  CHECK(logThreshold() == LogLevel::Error);
  unsetenv("SYNK_LOG_LEVEL");
  setLogThresholdFromEnvironment();
  CHECK(logThreshold() == LogLevel::Warning);
  CHECK(capture.lines.empty());
  setenv("SYNK_LOG_LEVEL", "loud", 1);
  setLogThresholdFromEnvironment();
  CHECK(logThreshold() == LogLevel::Warning);
  REQUIRE(capture.lines.size() == 1);
  CHECK(capture.lines[0].line ==
        "synk: SYNK_LOG_LEVEL='loud' is not one of error, warning, info, debug; using warning");
  if (before) {
    setenv("SYNK_LOG_LEVEL", saved.c_str(), 1);
  } else {
    unsetenv("SYNK_LOG_LEVEL");
  }
}

TEST_CASE("log: a real warning of the library reaches the sink with its text", "[core]") {
  Capture capture(LogLevel::Warning, 1);
  const std::string prefix = sessionShmPrefix(getpid(), randomToken());
  {
    ShmHeap heap(prefix, 1);
    int not_from_the_heap = 0;
    heap.release(&not_from_the_heap);  // a caller's bug: ignored, and said so
    REQUIRE(capture.lines.size() == 1);
    CHECK(capture.lines[0].level == LogLevel::Warning);
    CHECK(capture.lines[0].line == str("synk[rank 1]: ShmHeap::release of ",
                                       static_cast<void*>(&not_from_the_heap),
                                       ", which rank 1 never allocated"));
    void* p = heap.allocate(64);
    heap.release(p);
    CHECK(capture.lines.size() == 1);  // a good release says nothing
  }
  removeSegmentsWithPrefix(prefix);
}

TEST_CASE("log: lines of concurrent ranks reach one pipe whole", "[core]") {
  constexpr int kRanks = 4;
  constexpr int kLines = 100;
  // Long lines (but under PIPE_BUF): a message written in pieces would interleave.
  const std::string body(900, 'x');
  setLogThreshold(LogLevel::Warning);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const int saved_stderr = dup(STDERR_FILENO);
  REQUIRE(dup2(fds[1], STDERR_FILENO) >= 0);
  std::vector<pid_t> children;
  for (int rank = 0; rank < kRanks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      setLogRank(rank);
      for (int k = 0; k < kLines; ++k)
        logWarning("line ", k, " ", body);
      _exit(0);
    }
    children.push_back(pid);
  }
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  close(fds[1]);
  std::string all;
  char buffer[65536];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) all.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  // Every line is one whole message, and each rank's lines come in its order.
  std::map<int, int> next;
  size_t at = 0, whole = 0;
  while (at < all.size()) {
    const size_t end = all.find('\n', at);
    REQUIRE(end != std::string::npos);
    const std::string line = all.substr(at, end - at);
    at = end + 1;
    int rank = -1, k = -1;
    if (std::sscanf(line.c_str(), "synk[rank %d]: line %d ", &rank, &k) != 2) break;
    if (rank < 0 || rank >= kRanks || k != next[rank]) break;
    if (line != str("synk[rank ", rank, "]: line ", k, " ", body)) break;
    ++next[rank];
    ++whole;
  }
  CHECK(whole == size_t{kRanks} * kLines);
  CHECK(at == all.size());
}

}  // namespace
}  // namespace synk
