#include "tests/support/rank_fixture.h"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "synk/core/error.h"

namespace synk::test {
namespace {

constexpr auto kShutdownGrace = std::chrono::milliseconds(2000);

void writeSlotMessage(ProcessGroup& group, const std::string& message) {
  storeMessage(group.control().slot(group.rank()).message, message);
}

// Every rank's device: as listed, or one per rank, for device backends; the host backend binds
// none.
std::vector<int> devicesFor(const BackendFactory& factory, int n_ranks,
                            const std::vector<int>& listed) {
  if (!factory.bindsDevices()) return {};
  if (!listed.empty()) return listed;
  std::vector<int> devices(static_cast<size_t>(n_ranks));
  for (int r = 0; r < n_ranks; ++r)
    devices[static_cast<size_t>(r)] = r;
  return devices;
}

void requireRunnable(const BackendFactory& factory, int n_ranks, const std::vector<int>& devices) {
  std::string why;
  if (!factory.isViable(&why)) {
    skipTest(str("backend '", factory.name(), "' is not viable here: ", why));
  }
  if (!devices.empty() && static_cast<int>(devices.size()) != n_ranks) {
    FAIL("RankOptions::devices lists " << devices.size() << " devices for " << n_ranks << " ranks");
  }
  int needed = 0;
  for (int d : devices)
    needed = std::max(needed, d + 1);
  if (factory.deviceCount() < needed) {
    skipTest(str("backend '", factory.name(), "' sees ", factory.deviceCount(),
                 " device(s), the test needs ", needed));
  }
}

// Everything a rank does, master included. Returns why it failed, empty on success.
std::string runRank(ProcessGroup& group, BackendFactory& factory, const RankBody& body,
                    const std::vector<int>& devices) {
  std::string failure;
  std::unique_ptr<ShmHeap> heap;
  std::unique_ptr<Backend> backend;
  try {
    heap = std::make_unique<ShmHeap>(group.shmPrefix(), group.rank());
    const int ordinal = devices.empty() ? -1 : devices[static_cast<size_t>(group.rank())];
    RankEnvironment env{group, *heap, ordinal, devices};
    backend = createBackend(factory, env);
    RankContext context{group, *heap, *backend};
    body(context);
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "a non-standard exception (a Catch2 assertion inside a rank body?)";
  }
  writeSlotMessage(group, failure);
  // Nobody releases memory a peer may still be using until every rank is done.
  try {
    Waiter waiter = group.commandWaiter("the fixture's final barrier");
    group.barrier().arrive(waiter, BarrierSite::CommandEnd, failure.empty());
  } catch (const std::exception& e) {
    if (failure.empty()) {
      failure = str("at the final barrier: ", e.what());
      writeSlotMessage(group, failure);
    }
  }
  if (backend && group.aborted()) backend->abort();
  return failure;
}

int workerMain(ProcessGroup& group, BackendFactory& factory, const RankBody& body,
               const std::vector<int>& devices) {
  const std::string failure = runRank(group, factory, body, devices);
  // Stay until the master ends the session: a worker that exits while the session is live is
  // reported as dead by the master's liveness probe.
  if (!group.aborted()) {
    try {
      Waiter waiter = group.commandWaiter("waiting for the master to end the test");
      group.barrier().arrive(waiter, BarrierSite::CommandStart);
    } catch (const std::exception&) {
    }
  }
  return failure.empty() ? kExitOk : kExitFatal;
}

// Waits (with a deadline) for a worker to exit and describes how, leaving it for the process
// group to reap.
std::string waitForExit(pid_t pid, Clock::time_point deadline, bool& ok) {
  ok = false;
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return str("could not watch pid ", pid, ": ", std::strerror(errno));
  pollfd watch{fd, POLLIN, 0};
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  const int ready = poll(&watch, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
  close(fd);
  if (ready <= 0) return "did not exit before the deadline (killed by the shutdown)";
  siginfo_t info{};
  if (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) != 0) {
    return "already reaped by the process group (see the session's abort message)";
  }
  if (info.si_code == CLD_EXITED) {
    ok = info.si_status == kExitOk;
    return str("exited with code ", info.si_status);
  }
  return str("was killed by signal ", info.si_status);
}

}  // namespace

bool RankRun::allOk() const {
  return leftover_segments == 0 &&
         std::all_of(ranks.begin(), ranks.end(), [](const RankOutcome& o) { return o.ok(); });
}

std::string RankRun::describe() const {
  std::string out;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankOutcome& o = ranks[r];
    out += str("rank ", r, ": ", o.failure.empty() ? "ok" : "FAILED: " + o.failure,
               r == 0 ? "" : str(" (", o.exit, ")"), "\n");
  }
  out += str(leftover_segments, " shared-memory segment(s) named ", shm_prefix, "* left\n");
  return out;
}

RankRun launchRanks(BackendFactory& factory, int n_ranks, const RankBody& body,
                    const RankOptions& options) {
  const std::vector<int> devices = devicesFor(factory, n_ranks, options.devices);
  requireRunnable(factory, n_ranks, devices);
  factory.checkBeforeFork();
  ProcessGroupOptions group_options;
  group_options.n_ranks = n_ranks;
  group_options.master_rank = 0;
  group_options.timeout = options.timeout;
  group_options.startup_timeout = options.startup_timeout;
  group_options.spin = options.spin;
  auto group = ProcessGroup::create(group_options, [&](ProcessGroup& worker) {
    return workerMain(worker, factory, body, devices);
  });

  RankRun run;
  run.shm_prefix = group->shmPrefix();
  run.ranks.resize(n_ranks);
  run.ranks[0].failure = runRank(*group, factory, body, devices);
  if (!group->aborted()) {
    abortSession(group->control(), AbortReason::Shutdown, 0, "the test finished");
  }
  const auto deadline = Clock::now() + options.timeout;
  for (int r = 1; r < n_ranks; ++r) {
    RankOutcome& outcome = run.ranks[r];
    outcome.exit = waitForExit(group->pidOf(r), deadline, outcome.exited_ok);
    outcome.failure = group->control().slot(r).message;
    if (outcome.failure.empty() && !outcome.exited_ok) outcome.failure = outcome.exit;
  }
  const std::string abort_message = group->control().abort_message;
  group->shutdown(kShutdownGrace);
  run.leftover_segments = countSegmentsWithPrefix(run.shm_prefix);
  for (RankOutcome& outcome : run.ranks) {
    if (outcome.exit.rfind("already reaped", 0) == 0) outcome.exit += ": " + abort_message;
  }
  return run;
}

void runOnRanks(BackendFactory& factory, int n_ranks, const RankBody& body,
                const RankOptions& options) {
  const RankRun run = launchRanks(factory, n_ranks, body, options);
  // allOk() covers every rank's body, every worker's exit code and the leftover segments.
  INFO("backend " << factory.name() << ", " << n_ranks << " rank(s):\n" << run.describe());
  REQUIRE(run.allOk());
}

void skipTest(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::fflush(nullptr);
  std::exit(SYNK_SKIP_RETURN_CODE);
}

}  // namespace synk::test
