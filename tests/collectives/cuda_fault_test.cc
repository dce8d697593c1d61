// The cuda backend's fault contract (collectives/cuda/README.md, "Faults"): a rank SIGKILLed
// while NCCL all_reduces (one GPU per rank) or host-staged all_reduces (ranks sharing one GPU)
// are running makes the master's wait throw PeerFailure naming the rank
// and the signal within seconds (NCCL itself never notices: the master's process table does),
// every survivor aborts its communicator, every process is gone, and the GPUs work for the next
// session.
//
// The test process never touches CUDA: each session runs in a forked child that is its master
// (rank 0), so one process can run the faulty session and then a healthy one.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "synk/collectives/cuda_factory.h"
#include "synk/core/error.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

using Catch::Matchers::Contains;

struct ChildResult {
  bool finished = false;  // exited by itself before the deadline
  int status = 0;
  std::string report;  // what the child wrote
};

// Runs body() in a forked child and collects the string it returns through a pipe.
ChildResult runInChild(const std::function<std::string()>& body, std::chrono::seconds timeout) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string report;
    try {
      report = body();
    } catch (const std::exception& e) {
      report = str("EXCEPTION: ", e.what());
    }
    size_t done = 0;
    while (done < report.size()) {
      const ssize_t n = write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  ChildResult result;
  const auto deadline = Clock::now() + timeout;
  char chunk[4096];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd pfd{fds[0], POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) {
      result.finished = true;  // EOF: the child is done
      break;
    }
    result.report.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (!result.finished) kill(pid, SIGKILL);  // its ranks follow (PR_SET_PDEATHSIG)
  waitpid(pid, &result.status, 0);
  return result;
}

void requireGpus(BackendFactory& factory, int n) {
  std::string why;
  if (!factory.isViable(&why)) skipTest("the cuda backend is not viable here: " + why);
  if (factory.deviceCount() < n) {
    skipTest(str("needs ", n, " GPUs, ", factory.deviceCount(), " visible"));
  }
}

// Where the ranks run and how they all_reduce.
struct Placement {
  int n_ranks = 2;
  bool native = true;        // NCCL, or host staging
  std::vector<int> devices;  // empty: one GPU per rank
  RankOptions rankOptions() const {
    RankOptions options;
    options.devices = devices;
    return options;
  }
};

// The faulty session, run in the child. Reports "caught=<0|1> rank=<r> seconds=<s>
// teardown=<s> ok_exits=<k> leftover=<k> message=<...>".
std::string killOneRankDuringAllReduce(const Placement& placement) {
  const auto factory = makeCudaBackendFactory();
  bool caught = false;
  int failed_rank = -1;
  double seconds = -1;
  std::string message;
  Clock::time_point caught_at;
  const RankRun run = launchRanks(
      *factory, placement.n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(placement.native);
        const size_t count = size_t{4} << 20;  // 16 MiB of float32
        void* buffer = ctx.device().allocate(count * sizeof(float));
        const AllReduceArgs args{buffer, count, DType::Float32, ReduceOp::Sum};
        {
          Waiter waiter = ctx.waiter("warm-up all_reduce");
          comm.allReduce(args, waiter);
          ctx.device().synchronize(waiter);
        }
        if (ctx.rank() == 1) {
          for (int i = 0;; ++i) {
            Waiter waiter = ctx.waiter("the victim's all_reduce");
            comm.allReduce(args, waiter);
            if (i == 2) raise(SIGKILL);  // dies with its all_reduce in flight
            ctx.device().synchronize(waiter);
          }
        }
        const auto start = Clock::now();
        try {
          for (int i = 0; i < 100000; ++i) {
            Waiter waiter = ctx.waiter("all_reduce with a dying peer");
            comm.allReduce(args, waiter);
            ctx.device().synchronize(waiter);
          }
          if (ctx.rank() == 0) message = "100000 all_reduces completed without the victim";
        } catch (const PeerFailure& e) {
          if (ctx.rank() == 0) {
            caught = true;
            caught_at = Clock::now();
            failed_rank = e.rank();
            message = e.what();
            seconds = std::chrono::duration<double>(caught_at - start).count();
          }
        }
      },
      placement.rankOptions());
  const double teardown = std::chrono::duration<double>(Clock::now() - caught_at).count();
  int ok_exits = 0;
  for (size_t r = 1; r < run.ranks.size(); ++r)
    ok_exits += run.ranks[r].exited_ok ? 1 : 0;
  return str("caught=", caught ? 1 : 0, " rank=", failed_rank, " seconds=", seconds,
             " teardown=", teardown, " ok_exits=", ok_exits, " leftover=", run.leftover_segments,
             " message=", message, "\n", run.describe());
}

// A healthy session after the faulty one: the GPUs and NCCL must work.
std::string healthyAllReduce(const Placement& placement) {
  const auto factory = makeCudaBackendFactory();
  const RankRun run = launchRanks(
      *factory, placement.n_ranks,
      [&](RankContext& ctx) {
        const size_t count = 1000;
        std::vector<float> host(count, static_cast<float>(ctx.rank() + 1));
        void* buffer = ctx.device().allocate(count * sizeof(float));
        Waiter waiter = ctx.waiter("all_reduce after a fault");
        ctx.device().copy(buffer, host.data(), count * sizeof(float), CopyKind::HostToDevice);
        ctx.backend.communicator(placement.native)
            .allReduce({buffer, count, DType::Float32, ReduceOp::Sum}, waiter);
        ctx.device().copy(host.data(), buffer, count * sizeof(float), CopyKind::DeviceToHost);
        ctx.device().synchronize(waiter);
        ctx.device().release(buffer);
        const float expected = static_cast<float>(ctx.size() * (ctx.size() + 1) / 2);
        for (float v : host) {
          if (v != expected) throw std::runtime_error(str("got ", v, ", expected ", expected));
        }
      },
      placement.rankOptions());
  return str(run.allOk() ? "OK" : "FAILED", "\n", run.describe());
}

void faultScenario(const Placement& placement) {
  const auto factory = makeCudaBackendFactory();
  requireGpus(*factory, placement.devices.empty() ? placement.n_ranks : 1);
  const ChildResult fault =
      runInChild([&] { return killOneRankDuringAllReduce(placement); }, std::chrono::seconds(90));
  INFO("faulty session: " << fault.report);
  REQUIRE(fault.finished);
  CHECK_THAT(fault.report, Contains("caught=1 rank=1 "));
  CHECK_THAT(fault.report, Contains("SIGKILL"));
  CHECK_THAT(fault.report, Contains(" ok_exits=0 leftover=0 "));
  double seconds = 1e9;
  double teardown = 1e9;
  std::sscanf(fault.report.c_str(), "caught=%*d rank=%*d seconds=%lf teardown=%lf", &seconds,
              &teardown);
  CHECK(seconds < 10.0);   // the master reports the death within 10 s
  CHECK(teardown < 15.0);  // communicators aborted (bounded) and every rank gone
  const ChildResult next =
      runInChild([&] { return healthyAllReduce(placement); }, std::chrono::seconds(90));
  INFO("next session: " << next.report);
  REQUIRE(next.finished);
  CHECK_THAT(next.report, Contains("OK\n"));
}

TEST_CASE("cuda rank killed during NCCL all_reduces on 2 GPUs", "[gpu][fault]") {
  faultScenario({.n_ranks = 2, .native = true, .devices = {}});
}

TEST_CASE("cuda rank killed during NCCL all_reduces on 4 GPUs", "[gpu][fault]") {
  faultScenario({.n_ranks = 4, .native = true, .devices = {}});
}

TEST_CASE("cuda rank killed during host-staged all_reduces on 2 ranks sharing a GPU",
          "[gpu][fault]") {
  faultScenario({.n_ranks = 2, .native = false, .devices = {0, 0}});
}

TEST_CASE("cuda rank killed during host-staged all_reduces on 3 ranks sharing a GPU",
          "[gpu][fault]") {
  faultScenario({.n_ranks = 3, .native = false, .devices = {0, 0, 0}});
}

}  // namespace
}  // namespace synk::test
