// How long the shared-memory watcher takes to free a session whose master was killed with
// SIGKILL (core/shm_watcher.h; the contract: within a second). A test on 2 busy cores can only
// assert that it happens (tests/core/process/shm_watcher_test.cc); this measures the distribution.
//   bench_shm_watcher [--rounds 50] [--mib 64]
// Per round: a forked master opens a 2-rank cpu session holding MIB of Data, is killed, and the
// time runs until no segment of the session is named in /dev/shm and no process maps one.
// Prints the median, 90th percentile and maximum, and how many rounds took a second or more;
// exits 1 when any did.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "synk/core/shm_segment.h"
#include "synk/synk.h"
#include "tests/support/shm_mappings.h"

using Clock = std::chrono::steady_clock;

namespace {

// A master holding a session; returns its pid once the session is up (0 if it failed).
pid_t forkMaster(int64_t bytes) {
  int ready[2];
  if (pipe(ready) != 0) return 0;
  std::fflush(nullptr);
  const pid_t master = fork();
  if (master == 0) {
    close(ready[0]);
    char ok = 0;
    try {
      synk::Session session = synk::fork({.n_parallel = 2, .backend = "cpu"});
      synk::Data data = session.data(synk::Array(synk::DType::Float32, {bytes / 4}));
      ok = 1;
      (void)!write(ready[1], &ok, 1);
      pause();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_shm_watcher: %s\n", e.what());
    }
    (void)!write(ready[1], &ok, 1);
    _exit(1);
  }
  close(ready[1]);
  char ok = 0;
  const bool got = read(ready[0], &ok, 1) == 1 && ok == 1;
  close(ready[0]);
  if (!got) {
    waitpid(master, nullptr, 0);
    return 0;
  }
  return master;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * double(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  int64_t mib = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::atoll(argv[i + 1]);
  }
  std::vector<double> seconds;
  for (int round = 0; round < rounds; ++round) {
    const pid_t master = forkMaster(mib << 20);
    if (master == 0) return 2;
    const std::string prefix = synk::processShmPrefix(master);
    kill(master, SIGKILL);
    waitpid(master, nullptr, 0);
    const auto killed = Clock::now();
    while (synk::countSegmentsWithPrefix(prefix) > 0 || synk::test::processesMapping(prefix) > 0) {
      if (Clock::now() - killed > std::chrono::seconds(30)) break;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    seconds.push_back(std::chrono::duration<double>(Clock::now() - killed).count());
  }
  const long slow = std::count_if(seconds.begin(), seconds.end(), [](double s) { return s >= 1; });
  std::printf(
      "watcher frees a killed master's %lld MiB: median %.1f ms, p90 %.1f ms, max %.1f ms "
      "over %d rounds; %ld took 1 s or more\n",
      static_cast<long long>(mib), percentile(seconds, 0.5) * 1e3, percentile(seconds, 0.9) * 1e3,
      percentile(seconds, 1.0) * 1e3, rounds, slow);
  return slow == 0 ? 0 : 1;
}
