#pragma once
// The process discipline of synk-bench: the sweeping process never initialises CUDA and never
// forks ranks itself. Every repetition runs in a child (fork), which becomes the session's
// master and forks the ranks; so one invocation can sweep every GPU count, and every
// repetition is a fresh session.
//
// A child runs in its own process group, so Ctrl-C reaches synk-bench alone: it asks children
// to stop through the StopWord (they finish the step they are in, close the session and
// report), and kills their process group on a second Ctrl-C or a missed deadline. That kill
// takes the session's shared-memory watcher with it, so runChild then removes the segments of
// the session the child led (their names carry its pid) itself, before it reaps the child. A
// child dies with synk-bench (PR_SET_PDEATHSIG: SIGTERM, handled like a stop request, so the
// session still removes its shared memory), and the ranks die with the child.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace synk::harness {

// A word in shared memory inherited by every child: 0 run, 1 stop after the current step,
// 2 stop now (children are killed).
class StopWord {
 public:
  StopWord();
  ~StopWord();
  StopWord(const StopWord&) = delete;
  StopWord& operator=(const StopWord&) = delete;

  // Async-signal-safe: the first request asks for a graceful stop, the second for a hard one.
  void request() noexcept;
  int level() const noexcept;
  bool requested() const noexcept { return level() != 0; }

 private:
  uint32_t* word_;
};

// A counter in shared memory inherited by every child: a child counts the points it finished,
// the parent shows them in its progress line while the child runs (a collectives job measures
// a whole size sweep in one child).
class SharedCounter {
 public:
  SharedCounter();
  ~SharedCounter();
  SharedCounter(const SharedCounter&) = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;
  void reset() noexcept;
  void add(uint32_t n = 1) noexcept;
  uint32_t value() const noexcept;

 private:
  uint32_t* word_;
};

// In a child: whether it should stop (its parent asked, or it was sent SIGTERM / SIGINT).
bool childShouldStop(const StopWord& stop) noexcept;

struct ChildResult {
  std::string output;   // what the child wrote to its pipe (a body's report fd; a command's stdout)
  bool exited = false;  // exited normally (see exit_code) rather than by a signal
  int exit_code = -1;
  int signal = 0;          // the signal that ended it
  bool timed_out = false;  // killed at the deadline
  bool killed = false;     // killed by a hard stop
  bool lost = false;       // waitpid failed: its exit status is unknown (not a success)
  std::chrono::milliseconds deadline{0};
  std::string describe() const;  // "exited with code 3", "was killed by signal 11 (SIGSEGV)",
                                 // "did not finish within its deadline (60 s) and was killed"
};

// The one way synk-bench runs a process. The child runs `body(report_fd)` (exiting with its
// return value, without this process's atexit handlers or destructors) or executes `argv` (PATH
// searched), in a process group of its own (Ctrl-C reaches synk-bench alone) and dying with this
// process (SIGTERM). This process collects its pipe, runs `tick` about every 50 ms, and ends it
// at the deadline or a hard stop by killing its whole group (the session the child led included:
// its shared memory is removed then).
struct SpawnRequest {
  std::function<int(int report_fd)> body;
  std::vector<std::string> argv;
  // A command's stdout and stderr go to this file; "" = stdout to the pipe, stderr discarded.
  std::string output_file;
  std::chrono::milliseconds deadline{std::chrono::minutes(10)};
  const StopWord* stop = nullptr;  // level 2 kills the group; a body reads level 1 itself
  bool interrupt_on_stop = false;  // a command gets SIGINT at level 1 (it has no stop word) ...
  int interrupt_signal = SIGINT;   // ... or this one (a launcher: SIGTERM, launched_point.cc)
  std::function<void()> tick;
};
ChildResult spawn(const SpawnRequest& request);

// spawn() of a body with a stop word: a repetition (or a probe) in a child of its own.
ChildResult runChild(const std::function<int(int report_fd)>& body, const StopWord& stop,
                     std::chrono::milliseconds deadline, const std::function<void()>& tick = {});

// Writes all of `bytes` to fd (retrying short writes); false if the reader is gone.
bool writeAll(int fd, const std::string& bytes);

// Installs the handlers that turn Ctrl-C and SIGTERM into stop requests on `stop` (nullptr
// restores the defaults).
void installStopHandlers(StopWord* stop);
// After a sweep's last job: Ctrl-C and SIGTERM are ignored from now on, so a late or second
// SIGINT neither kills synk-bench while it stores the run's status and prints the summary (it
// would exit 130 and leave the run "running") nor reaches a handler whose stop word went with
// the sweep. Nothing is forked after this.
void ignoreStopSignals();

// spawn() of a command: its standard output, or nullopt if it could not be run, did not finish
// in time (it is killed) or failed.
std::optional<std::string> captureOutput(const std::vector<std::string>& argv,
                                         std::chrono::milliseconds deadline);

}  // namespace synk::harness
