// A master killed by a signal cannot clean up: its watcher process removes the session's
// segments within milliseconds, without waiting for another fork() to sweep them.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "synk/core/shm_segment.h"
#include "tests/support/rank_fixture.h"
#include "tests/support/session_fixture.h"
#include "tests/support/shm_mappings.h"

using namespace synk;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Ready {
  int ok = 0;
};

// Forks a master that opens a session holding `data_bytes` of Data, says so, and waits to be
// killed. Returns its pid, or 0 when it could not start a session (skipped backend).
pid_t forkMaster(int64_t data_bytes) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  std::fflush(nullptr);
  const pid_t master = fork();
  if (master == 0) {
    close(ready[0]);
    Ready message;
    try {
      Session session = test::forkForTest(2);
      Data big = session.data(Array(DType::Float32, {data_bytes / 4}));
      message.ok = 1;
      (void)!write(ready[1], &message, sizeof message);
      pause();
    } catch (...) {
    }
    (void)!write(ready[1], &message, sizeof message);
    _exit(1);
  }
  close(ready[1]);
  Ready message;
  const ssize_t got = read(ready[0], &message, sizeof message);
  close(ready[0]);
  if (got != sizeof message || !message.ok) {
    int status = 0;
    waitpid(master, &status, 0);
    return 0;
  }
  return master;
}

}  // namespace

TEST_CASE("a master killed by SIGKILL: its watcher frees its shared memory, every time",
          "[core][fault]") {
  // The contract is "within a second" (tests/bench/bench_shm_watcher.cc measures how long it
  // takes and reports the distribution); a test on 2 busy cores asserts the outcome, with a
  // deadline that only a hang misses.
  const int64_t data_bytes = int64_t{64} << 20;
  const int rounds = test::testBackend() == "cpu" ? 20 : 5;  // a cuda session starts slowly
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    const pid_t master = forkMaster(data_bytes);
    if (master == 0) test::skipTest("the child could not start a session here");
    const std::string prefix = processShmPrefix(master);
    REQUIRE(countSegmentsWithPrefix(prefix) > 0);
    REQUIRE(test::processesMapping(prefix) > 0);
    kill(master, SIGKILL);
    waitpid(master, nullptr, 0);
    const auto killed = Clock::now();
    // Freed: no name left, and no process (a worker, the watcher) still maps a segment, which
    // would keep its memory alive. Checked on this session alone: other tests' use of /dev/shm
    // does not enter.
    bool freed = false;
    while (!freed && secondsSince(killed) < 30.0) {
      freed = countSegmentsWithPrefix(prefix) == 0 && test::processesMapping(prefix) == 0;
      if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    INFO("segments left " << countSegmentsWithPrefix(prefix) << ", processes mapping one "
                          << test::processesMapping(prefix));
    CHECK(freed);
  }
}

TEST_CASE("a session closed normally dismisses its watcher", "[core]") {
  Session session = test::forkForTest(2);
  Data keep = session.data(Array(DType::Float32, {1024}));
  const std::vector<int> pids = session.pids();
  session.close();
  // Nothing of the session is left, and no process of it either (the watcher is reaped).
  CHECK(test::segmentsOfThisProcess() == 0);
  for (size_t r = 1; r < pids.size(); ++r)
    CHECK_FALSE(test::processAlive(pids[r]));
  // No child of this process is left: the watcher left and was reaped.
  std::ifstream children(str("/proc/self/task/", getpid(), "/children"));
  std::string listed;
  if (children) std::getline(children, listed);
  CHECK(listed.find_first_not_of(' ') == std::string::npos);
}

TEST_CASE("a session whose watcher was killed still closes (no SIGPIPE ends the master)",
          "[core]") {
  Session session = test::forkForTest(2);
  Data keep = session.data(Array(DType::Float32, {1024}));
  // The watcher names itself after its fork, so its name may not be there yet: looked for until
  // it is (bounded).
  pid_t watcher = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (watcher == 0 && std::chrono::steady_clock::now() < give_up) {
    std::ifstream children(str("/proc/self/task/", getpid(), "/children"));
    for (pid_t child = 0; children >> child;) {
      std::ifstream comm(str("/proc/", child, "/comm"));
      std::string name;
      if (comm >> name && name == "synk-watcher") watcher = child;
    }
    if (watcher == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(watcher > 0);
  REQUIRE(kill(watcher, SIGKILL) == 0);
  while (test::processAlive(watcher) && waitpid(watcher, nullptr, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  session.close();  // writes to the watcher's pipe, whose reader is gone
  CHECK(test::segmentsOfThisProcess() == 0);
}
