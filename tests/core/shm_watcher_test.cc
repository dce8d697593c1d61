// A master killed by a signal cannot clean up: its watcher process removes the session's
// segments within milliseconds, without waiting for another fork() to sweep them.
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "synk/core/shm_segment.h"
#include "tests/support/rank_fixture.h"
#include "tests/support/session_fixture.h"

using namespace synk;
using Clock = std::chrono::steady_clock;

namespace {

double usedShmBytes() {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return 0;
  return double(fs.f_blocks - fs.f_bfree) * double(fs.f_frsize);
}

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

TEST_CASE("a master killed by SIGKILL: its watcher frees /dev/shm within a second, every time",
          "[core][fault]") {
  // 64 MiB per session: more than what tests running beside this one allocate meanwhile,
  // so the drop in /dev/shm's use is this session's.
  const int64_t data_bytes = int64_t{64} << 20;
  const int rounds = test::testBackend() == "cpu" ? 20 : 5;  // a cuda session starts slowly
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    const pid_t master = forkMaster(data_bytes);
    if (master == 0) test::skipTest("the child could not start a session here");
    const std::string prefix = processShmPrefix(master);
    REQUIRE(countSegmentsWithPrefix(prefix) > 0);
    const double with_session = usedShmBytes();
    kill(master, SIGKILL);
    waitpid(master, nullptr, 0);
    const auto killed = Clock::now();
    bool freed = false;
    while (!freed && secondsSince(killed) < 1.0) {
      freed = countSegmentsWithPrefix(prefix) == 0 &&
              usedShmBytes() <= with_session - 0.5 * double(data_bytes);
      if (!freed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(freed);
    CHECK(secondsSince(killed) < 1.0);
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
