// NcclCommunicator's fault contract (collectives/cuda/README.md, "Fault contract") against the
// NCCL stand-in's scripted faults: a call that answers ncclInProgress and then fails, a peer that
// never arrives (at init, at the split, at a collective), and an abort during a job (a peer
// SIGKILLed while the init jobs run). Every rank ends within the bound with the error the
// contract names, aborts (never destroys) its communicators, and leaves no thread, communicator
// or shared memory behind.
#include <catch2/catch.hpp>

#include "tests/collectives/nccl_standin_checks.h"

namespace synk::test {
namespace {

using Catch::Matchers::Contains;

constexpr auto kDeadline = std::chrono::milliseconds(2000);
// Deadline, then the abort and the fixture's shutdown: generous for a loaded CI machine, far
// below NcclCommunicator's own bounds (a wait that ignored the deadline would take 60 s).
constexpr double kBoundSeconds = 10.0;

RankOptions shortDeadline() {
  RankOptions options;
  options.timeout = kDeadline;
  options.startup_timeout = kDeadline;  // the faults at init and split: at this deadline
  return options;
}

// Runs `body` on n ranks with `faults` scripted and the short deadline, and checks that it ended
// within the bound.
RankRun runWithFaults(const standin::Faults& faults, int n_ranks, const RankBody& body) {
  const auto factory = standinFactory(faults);
  const auto start = Clock::now();
  RankRun run = launchRanks(*factory, n_ranks, body, shortDeadline());
  const double seconds = secondsSince(start);
  INFO(run.describe() << ledgerReport(n_ranks));
  CHECK(seconds < kBoundSeconds);
  return run;
}

// A body for faults at creation: reaching it means the fault did not stop the backend.
RankBody unreachable(const char* what) {
  return [what](RankContext&) { throw std::runtime_error(what); };
}

// Every rank failed, and its message contains each of `parts`.
void requireEveryRankFailed(const RankRun& run, const std::vector<std::string>& parts) {
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    INFO("rank " << r << ": " << run.ranks[r].failure);
    CHECK_FALSE(run.ranks[r].failure.empty());
    for (const std::string& part : parts)
      CHECK_THAT(run.ranks[r].failure, Contains(part));
  }
}

void requireAbortedNotDestroyed(int n_ranks, int aborts) {
  INFO(ledgerReport(n_ranks));
  for (int r = 0; r < n_ranks; ++r) {
    CHECK(standin::record(r).aborts.load() == aborts);
    CHECK(standin::record(r).destroys.load() == 0);
    CHECK(standin::record(r).finalizes.load() == 0);
  }
}

TEST_CASE("init answers ncclInProgress, then fails: every rank throws NcclError and aborts",
          "[coll][fault]") {
  const int n = GENERATE(1, 3);
  standin::Faults faults;
  faults.job_delay = std::chrono::milliseconds(50);
  faults.fail = {standin::Call::Init, -1};
  const RankRun run = runWithFaults(faults, n, unreachable("the init did not fail"));
  requireEveryRankFailed(run, {"ncclCommInitRankConfig", "unhandled system error",
                               "injected failure of ncclCommInitRankConfig"});
  requireAbortedNotDestroyed(n, 1);
  requireNothingLeft(run, n);
}

TEST_CASE("init fails on one rank: it throws NcclError, its peers time out at the deadline",
          "[coll][fault]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Init, 1};
  const RankRun run = runWithFaults(faults, 3, unreachable("the init did not fail"));
  INFO(run.describe());
  CHECK_THAT(run.ranks[1].failure,
             Contains("ncclCommInitRankConfig") && Contains("injected failure"));
  for (int r : {0, 2}) {
    CHECK_THAT(run.ranks[r].failure, Contains("timed out") && Contains("ncclCommInitRankConfig"));
  }
  requireAbortedNotDestroyed(3, 1);
  requireNothingLeft(run, 3);
}

TEST_CASE("a peer never arrives at init: every rank times out and aborts during its job",
          "[coll][fault]") {
  standin::Faults faults;
  faults.absent = {standin::Call::Init, 2};
  const RankRun run = runWithFaults(faults, 3, unreachable("the init completed"));
  requireEveryRankFailed(run, {"ncclCommInitRankConfig"});
  CHECK_THAT(run.ranks[0].failure, Contains("timed out"));
  requireAbortedNotDestroyed(3, 1);
  for (int r = 0; r < 3; ++r)
    CHECK(standin::record(r).jobs_stopped_by_abort.load() == 1);
  requireNothingLeft(run, 3);
}

// Under the non-blocking parent the split answers ncclSuccess; its job then fails, which only
// the parent's state says.
TEST_CASE("the split's job fails after ncclSuccess: every rank throws NcclError naming the split",
          "[coll][fault]") {
  const int n = GENERATE(1, 2);
  standin::Faults faults;
  faults.fail = {standin::Call::Split, -1};
  const RankRun run = runWithFaults(faults, n, unreachable("the split did not fail"));
  requireEveryRankFailed(run, {"ncclCommSplit", "injected failure of ncclCommSplit"});
  requireAbortedNotDestroyed(n, 1);
  for (int r = 0; r < n; ++r)
    CHECK(standin::record(r).split_returned_while_running.load() == 1);
  requireNothingLeft(run, n);
}

// The split's job is a job of the parent: abort must stop it, and it must not write the child's
// slot after the abort returned (no child communicator may be left).
TEST_CASE("a peer never arrives at the split: every rank times out and aborts the parent",
          "[coll][fault]") {
  const int n = GENERATE(2, 3);
  standin::Faults faults;
  faults.absent = {standin::Call::Split, 1};
  const RankRun run = runWithFaults(faults, n, unreachable("the split completed"));
  requireEveryRankFailed(run, {"ncclCommSplit"});
  CHECK_THAT(run.ranks[0].failure, Contains("timed out"));
  requireAbortedNotDestroyed(n, 1);
  for (int r = 0; r < n; ++r)
    CHECK(standin::record(r).jobs_stopped_by_abort.load() == 1);
  requireNothingLeft(run, n);
}

TEST_CASE("a peer never arrives at a collective: the others time out and abort both communicators",
          "[coll][fault]") {
  const int n = GENERATE(2, 3);
  standin::Faults faults;
  faults.absent = {standin::Call::Collective, 1, 2};  // rank 1's third all_reduce
  const RankRun run = runWithFaults(faults, n, [](RankContext& ctx) {
    for (int i = 0; i < 5; ++i)
      sumAndCheck(ctx, 1000);
  });
  requireEveryRankFailed(run, {"timed out"});
  requireAbortedNotDestroyed(n, 2);
  for (int r = 0; r < n; ++r)
    CHECK(standin::record(r).ops_stopped_by_abort.load() == 1);
  requireNothingLeft(run, n);
}

// gather's send runs on the non-blocking parent: ncclInProgress, then the job fails.
// Collectives run on the non-blocking communicator only when there is no blocking child: the
// user asked for lazy connections (NCCL_RUNTIME_CONNECT other than 0), so none is split off.
TEST_CASE("a collective answers ncclInProgress, then fails: NcclError names the call",
          "[coll][fault]") {
  setenv("NCCL_RUNTIME_CONNECT", "1", 1);  // this test's process only (CTest runs one per case)
  standin::Faults faults;
  faults.fail = {standin::Call::Collective, 1, 0};
  const RankRun run = runWithFaults(faults, 2, [](RankContext& ctx) {
    Device& device = ctx.device();
    void* buffer = device.allocate(4 * sizeof(float));
    Waiter waiter = ctx.waiter("all_reduce");
    ncclOf(ctx).allReduce({buffer, 4, DType::Float32, ReduceOp::Sum}, waiter);
    device.synchronize(waiter);
  });
  unsetenv("NCCL_RUNTIME_CONNECT");
  INFO(run.describe() << ledgerReport(2));
  CHECK_THAT(run.ranks[1].failure,
             Contains("ncclAllReduce") && Contains("injected failure of a collective"));
  CHECK_THAT(run.ranks[0].failure, Contains("timed out"));
  requireNothingLeft(run, 2);
}

// On the blocking child the call returns ncclSuccess; the failure surfaces as the
// communicator's asynchronous error, which synchronize() polls.
TEST_CASE("a collective fails on the stream: synchronize reports NCCL's asynchronous error",
          "[coll][fault]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Collective, 0, 0};
  const RankRun run = runWithFaults(faults, 2, [](RankContext& ctx) { sumAndCheck(ctx, 100); });
  INFO(run.describe() << ledgerReport(2));
  CHECK_THAT(run.ranks[0].failure, Contains("NCCL reported an error while the GPU was working") &&
                                       Contains("injected failure of ncclAllReduce"));
  CHECK_FALSE(run.ranks[1].failure.empty());
  requireNothingLeft(run, 2);
}

// The windows communicator's asynchronous errors are polled too: a windowed call's all-reduce
// that fails on the stream is reported at once, not at the step's deadline. Rank 0's third
// collective fails: the windows communicator's first (on plain memory), the new window's first,
// then the call's.
TEST_CASE("an all-reduce on the windows communicator fails: synchronize reports it",
          "[coll][fault]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Collective, 0, 2};
  const RankRun run = runWithFaults(faults, 2, [](RankContext& ctx) {
    Waiter waiter = ctx.waiter("a window call's all_reduce");
    AllReduceArgs args{adoptedWindow(ctx, 4096, waiter), 16, DType::Float32, ReduceOp::Sum};
    args.in_window = args.window_call = true;
    ncclOf(ctx).allReduce(args, waiter);
    ctx.device().synchronize(waiter);
  });
  INFO(run.describe() << ledgerReport(2));
  CHECK_THAT(run.ranks[0].failure, Contains("NCCL reported an error while the GPU was working") &&
                                       Contains("injected failure of ncclAllReduce"));
  CHECK_FALSE(run.ranks[1].failure.empty());
  requireNothingLeft(run, 2);
}

TEST_CASE("abort during a job: a peer SIGKILLed in its init job, the others abort theirs",
          "[coll][fault]") {
  standin::Faults faults;
  faults.job_delay = std::chrono::milliseconds(1000);
  faults.die = {standin::Call::Init, 1};  // dies half-way through its job
  const RankRun run = runWithFaults(faults, 3, unreachable("the init completed"));
  INFO(run.describe() << ledgerReport(3));
  // Ended by the death (PeerFailure from the master's process table), not by the deadline.
  CHECK_THAT(run.ranks[0].failure, Contains("rank 1") && Contains("SIGKILL"));
  CHECK_FALSE(run.ranks[1].exited_ok);
  CHECK_FALSE(run.ranks[2].failure.empty());
  for (int r : {0, 2}) {
    CHECK(standin::record(r).aborts.load() == 1);
    CHECK(standin::record(r).destroys.load() == 0);
    CHECK(standin::record(r).jobs_stopped_by_abort.load() == 1);
  }
  requireNothingLeft(run, 3, /*killed_rank_ok=*/true);
}

}  // namespace
}  // namespace synk::test
