#include "tests/support/session_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "synk/collectives/registry.h"
#include "synk/core/backend.h"
#include "synk/core/error.h"
#include "synk/core/shm_segment.h"
#include "synk/synk.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {

std::string testBackend() {
  const char* backend = std::getenv("SYNK_TEST_BACKEND");
  return backend && *backend ? backend : "cpu";
}

bool sharesDevices(int n_ranks) {
  BackendRegistry registry = makeDefaultRegistry();
  BackendFactory* factory = registry.find(testBackend());
  return factory != nullptr && factory->bindsDevices() && factory->deviceCount() < n_ranks;
}

bool windowsExpected(int n_ranks) {
  auto is_one = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::string(value) == "1";
  };
  if (n_ranks < 2) return false;
  if (testBackend() == "cpu") return is_one("SYNK_SHM_WINDOWS");  // shared memory's test mode
  return testBackend() == "cuda" && !sharesDevices(n_ranks) && is_one("SYNK_TEST_EXPECT_WINDOWS");
}

int ranksForEveryDevice(int minimum) {
  BackendRegistry registry = makeDefaultRegistry();
  BackendFactory* factory = registry.find(testBackend());
  if (factory == nullptr || !factory->bindsDevices()) return minimum;
  return std::max(minimum, factory->deviceCount());
}

Session forkForTest(int n_ranks, ForkOptions options) {
  options.backend = testBackend();
  options.n_parallel = n_ranks;
  if (options.timeout == ForkOptions{}.timeout) options.timeout = std::chrono::seconds(30);
  BackendRegistry registry = makeDefaultRegistry();
  BackendFactory* factory = registry.find(options.backend);
  std::string why;
  if (!factory || !factory->isViable(&why)) {
    skipTest(str("backend ", options.backend, " is not available: ", why));
  }
  if (factory->bindsDevices()) {
    const int count = factory->deviceCount();
    if (count < 1) skipTest(str("no ", options.backend, " device visible"));
    if (options.devices.empty() && count < n_ranks) {
      // Fewer GPUs than ranks: ranks share them round-robin, which runs every multi-rank path
      // but NCCL (collectives go host-staged; CollectiveOptions left unset picks that).
      for (int r = 0; r < n_ranks; ++r)
        options.devices.push_back(r % count);
    }
  }
  return synk::fork(options);
}

std::string pluginFile(const std::string& name) {
  return pluginPath(name);
}

Kit::Kit(int n_ranks, ForkOptions options)
    : session(forkForTest(n_ranks, std::move(options))),
      model(session.load(pluginFile("synk_testkit"))) {}

int segmentsOfThisProcess() {
  return countSegmentsWithPrefix(processShmPrefix(getpid()));
}

bool processAlive(int pid) {
  if (waitpid(pid, nullptr, WNOHANG) == pid) return false;  // our child, now reaped
  // A zombie (dead, not yet reaped by whoever adopted it) counts as gone.
  FILE* stat = std::fopen(str("/proc/", pid, "/stat").c_str(), "r");
  if (!stat) return false;
  char state = '?';
  const int fields = std::fscanf(stat, "%*d (%*[^)]) %c", &state);
  std::fclose(stat);
  return fields == 1 && state != 'Z' && state != 'X';
}

}  // namespace synk::test
