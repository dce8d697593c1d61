// synk's NcclCommunicator (collectives/cuda/nccl/nccl_communicator.h) against the NCCL stand-in
// (tests/support/nccl_standin): the conformance suite on 1-4 forked ranks, the split that
// returns ncclSuccess while its job still runs, finalize's ncclInProgress, and the teardown
// barrier. No GPU: this is how CI catches a misuse of NCCL's non-blocking API.
#include <catch2/catch.hpp>

#include "synk/core/process/node_span.h"
#include "synk/core/session.h"
#include "tests/collectives/nccl_standin_checks.h"
#include "tests/support/conformance_checks.h"

namespace synk::test {
namespace {

// A healthy run: nothing refused, no violation, the child split off and used, every
// communicator finalized or aborted at close, nothing left.
void requireHealthy(const RankRun& run, int n_ranks, int sessions = 1) {
  requireNothingLeft(run, n_ranks);
  INFO(ledgerReport(n_ranks));
  CHECK(standin::ledger().violations.load() == 0);
  for (int r = 0; r < n_ranks; ++r) {
    const standin::RankRecord& l = standin::record(r);
    CHECK(l.refused.load() == 0);
    CHECK(l.split_returned_while_running.load() == sessions);
    CHECK(l.finalizes.load() == sessions);
    CHECK(l.destroys.load() == sessions);  // the parent, after its finalize
    CHECK(l.aborts.load() == sessions);    // the idle blocking child
  }
}

// The whole conformance suite (7 sessions), then the ledger of the last one.
void conformance(int n_ranks) {
  const auto factory = standinFactory();
  checkAllCollectives(*factory, n_ranks);
  INFO(ledgerReport(n_ranks));
  CHECK(standin::ledger().violations.load() == 0);
  CHECK(leftoverIds() == 0);
  for (int r = 0; r < n_ranks; ++r) {
    CHECK(standin::record(r).refused.load() == 0);
    CHECK(standin::record(r).live_threads_at_exit.load() == 0);
    CHECK(standin::record(r).live_comms_at_exit.load() == 0);
  }
}

TEST_CASE("nccl stand-in conformance on 1 rank", "[coll]") {
  conformance(1);
}
TEST_CASE("nccl stand-in conformance on 2 ranks", "[coll]") {
  conformance(2);
}
// 3 ranks: avg is a sum then a scaling pass (1/3 is not exact as ncclAvg's premultiply).
TEST_CASE("nccl stand-in conformance on 3 ranks", "[coll]") {
  conformance(3);
}
TEST_CASE("nccl stand-in conformance on 4 ranks", "[coll]") {
  conformance(4);
}

TEST_CASE("the split returns ncclSuccess while its job runs: the child is used once joined",
          "[coll]") {
  const int n = GENERATE(1, 2, 3);
  standin::Faults faults;
  faults.split_delay = std::chrono::milliseconds(200);  // long after ncclCommSplit returned
  const auto factory = standinFactory(faults);
  const RankRun run = launchRanks(*factory, n, [](RankContext& ctx) {
    NcclCommunicator& nccl = ncclOf(ctx);
    if (nccl.comm() == nullptr || nccl.comm() == nccl.parent()) {
      throw std::runtime_error(str("rank ", ctx.rank(),
                                   ": collectives run on the non-blocking parent: the split's "
                                   "child was not taken (read before the split's job wrote it?)"));
    }
    if (!standin::isBlocking(nccl.comm()) || standin::isBlocking(nccl.parent())) {
      throw std::runtime_error("the child should be blocking and the parent non-blocking");
    }
    sumAndCheck(ctx, 1000);
    // gather runs send/recv on the non-blocking parent: each call polled to completion.
    Device& device = ctx.device();
    const std::vector<size_t> counts(static_cast<size_t>(ctx.size()), 3);
    std::vector<float> mine(3, static_cast<float>(ctx.rank()));
    std::vector<float> all(3 * counts.size(), -1.0f);
    void* send = device.allocate(3 * sizeof(float));
    void* recv = device.allocate(all.size() * sizeof(float));
    device.copy(send, mine.data(), 3 * sizeof(float), CopyKind::HostToDevice);
    Waiter waiter = ctx.waiter("gather");
    nccl.gather({send, recv, counts, DType::Float32, 0}, waiter);
    device.copy(all.data(), recv, all.size() * sizeof(float), CopyKind::DeviceToHost);
    device.synchronize(waiter);
    for (size_t i = 0; ctx.rank() == 0 && i < all.size(); ++i) {
      if (all[i] != static_cast<float>(i / 3)) {
        throw std::runtime_error(str("gather: element ", i, " is ", all[i]));
      }
    }
    device.release(send);
    device.release(recv);
  });
  INFO(run.describe());
  REQUIRE(run.allOk());
  requireHealthy(run, n);
}

// A session's start (init, then the split) may take longer than a step's deadline: several GPUs'
// communicators take seconds while a user's steps may be bounded at one. The start has its own.
TEST_CASE("a start slower than the step deadline is bounded by startup_timeout, not timeout",
          "[coll]") {
  standin::Faults faults;
  faults.job_delay = std::chrono::milliseconds(1500);  // init and split: each past `timeout`
  RankOptions options;
  options.timeout = std::chrono::milliseconds(1000);
  options.startup_timeout = std::chrono::milliseconds(30000);
  const auto factory = standinFactory(faults);
  const RankRun run = launchRanks(
      *factory, 2, [](RankContext& ctx) { sumAndCheck(ctx, 100); }, options);
  INFO(run.describe());
  REQUIRE(run.allOk());
  requireHealthy(run, 2);
}

TEST_CASE("finalize answers ncclInProgress, then ncclSuccess: close polls it, then destroys",
          "[coll]") {
  standin::Faults faults;
  faults.job_delay = std::chrono::milliseconds(100);  // every non-blocking job is slow
  const auto factory = standinFactory(faults);
  const RankRun run = launchRanks(*factory, 2, [](RankContext& ctx) { sumAndCheck(ctx, 100); });
  INFO(run.describe());
  REQUIRE(run.allOk());
  requireHealthy(run, 2);
  for (int r = 0; r < 2; ++r)
    CHECK(standin::record(r).finalize_in_progress.load() == 1);
}

TEST_CASE("finalize answers ncclInProgress, then fails: the communicator is aborted, not destroyed",
          "[coll]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Finalize, -1};
  const auto factory = standinFactory(faults);
  const RankRun run = launchRanks(*factory, 2, [](RankContext& ctx) { sumAndCheck(ctx, 100); });
  INFO(run.describe());
  REQUIRE(run.allOk());  // close reports and aborts; the rank's work had succeeded
  requireNothingLeft(run, 2);
  for (int r = 0; r < 2; ++r) {
    CHECK(standin::record(r).finalize_in_progress.load() == 1);
    CHECK(standin::record(r).destroys.load() == 0);
    CHECK(standin::record(r).aborts.load() == 2);  // the parent after its failed finalize too
  }
}

// The slow rank's last all_reduce still reads from its peers when they close: without a
// teardown barrier they would tear their communicators down under it (a violation).
TEST_CASE("no rank tears its communicator down while a peer's last collective still runs",
          "[coll]") {
  const int n = GENERATE(2, 3);
  standin::Faults faults;
  faults.slow_rank = n - 1;
  faults.slow_delay = std::chrono::milliseconds(300);
  const auto factory = standinFactory(faults);
  const auto start = Clock::now();
  const RankRun run = launchRanks(*factory, n, [](RankContext& ctx) {
    sumAndCheck(ctx, 100);                  // waited for: the slow rank is slow here too
    sumAndCheck(ctx, 100, /*wait=*/false);  // the last one: only close waits for it
  });
  INFO(run.describe());
  REQUIRE(run.allOk());
  CHECK(secondsSince(start) >= 0.6);  // both collectives of the slow rank really were late
  requireHealthy(run, n);
}

// Windows (Communicator::allocateWindow): a third communicator, split at the first window, holds
// the registrations and runs only the all-reduces of calls with windows (window_call, here one in
// its window); every other collective stays on the blocking child, where nothing is registered.
// Close aborts both idle children and frees the memory.
TEST_CASE(
    "a window is registered on a communicator of its own, which runs only the all-reduces of "
    "calls with windows",
    "[coll]") {
  const int n = GENERATE(2, 3);
  const auto factory = standinFactory();
  const RankRun run = launchRanks(*factory, n, [](RankContext& ctx) {
    NcclCommunicator& nccl = ncclOf(ctx);
    Device& device = ctx.device();
    Waiter waiter = ctx.waiter("windows");
    if (!nccl.hasWindows()) throw std::runtime_error("no windows on several ranks");
    constexpr size_t kCount = 1000;
    auto* window = static_cast<float*>(nccl.allocateWindow(kCount * sizeof(float), waiter));
    if (window == nullptr) throw std::runtime_error("allocateWindow gave nothing");
    if (nccl.windowsComm() == nullptr || nccl.windowsComm() == nccl.comm()) {
      throw std::runtime_error("the window is not on a communicator of its own");
    }
    if (nccl.windowOf(window + 10, 100 * sizeof(float)) != 0 ||
        nccl.windowOf(window + 10, kCount * sizeof(float)) != -1) {
      throw std::runtime_error("windowOf does not find the window (or finds too much)");
    }
    device.adoptWindow(window);
    const std::vector<float> mine(kCount, static_cast<float>(ctx.rank() + 1));
    device.copy(window, mine.data(), kCount * sizeof(float), CopyKind::HostToDevice);
    AllReduceArgs in_window{window, kCount, DType::Float32, ReduceOp::Sum};
    in_window.in_window = in_window.window_call = true;
    nccl.allReduce(in_window, waiter);
    // Not marked: the ordinary communicator, on the same memory.
    nccl.allReduce({window, kCount, DType::Float32, ReduceOp::Sum}, waiter);
    std::vector<float> got(kCount);
    device.copy(got.data(), window, kCount * sizeof(float), CopyKind::DeviceToHost);
    device.synchronize(waiter);
    const int size = ctx.size();
    const auto want = static_cast<float>(size * size * (size + 1) / 2);
    if (got.front() != want || got.back() != want) {
      throw std::runtime_error(str("window all-reduces give ", got.front(), ", want ", want));
    }
    device.release(window);  // adopted: left to the communicator
  });
  INFO(run.describe());
  REQUIRE(run.allOk());
  requireNothingLeft(run, n);
  INFO(ledgerReport(n));
  CHECK(standin::ledger().violations.load() == 0);
  for (int r = 0; r < n; ++r) {
    const standin::RankRecord& l = standin::record(r);
    CHECK(l.refused.load() == 0);
    CHECK(l.splits.load() == 2);  // the blocking child, then the windows communicator
    CHECK(l.window_registrations.load() == 1);
    CHECK(l.window_ops.load() == 2);  // the window's first (at allocation) and the marked one
    CHECK(l.finalizes.load() == 1);
    CHECK(l.aborts.load() == 2);  // both idle children at close
  }
}

// A call that agreed on windows runs all its all-reduces on the windows communicator
// (AllReduceArgs::window_call), those of buffers in no window with NCCL's ordinary kernels, so a
// step's CUDA graph meets one communicator.
TEST_CASE("a window call's all-reduce of a buffer in no window runs on the windows communicator",
          "[coll]") {
  const auto factory = standinFactory();
  const RankRun run = launchRanks(*factory, 2, [](RankContext& ctx) {
    NcclCommunicator& nccl = ncclOf(ctx);
    Device& device = ctx.device();
    Waiter waiter = ctx.waiter("windows");
    (void)adoptedWindow(ctx, 4096, waiter);  // the call has a window; its buffer lies outside
    auto* plain = static_cast<float*>(device.allocate(16 * sizeof(float)));
    const std::vector<float> mine(16, static_cast<float>(ctx.rank() + 1));
    device.copy(plain, mine.data(), 16 * sizeof(float), CopyKind::HostToDevice);
    AllReduceArgs in_call{plain, 16, DType::Float32, ReduceOp::Sum};
    in_call.window_call = true;
    nccl.allReduce(in_call, waiter);
    std::vector<float> got(16);
    device.copy(got.data(), plain, 16 * sizeof(float), CopyKind::DeviceToHost);
    device.synchronize(waiter);
    if (got.front() != 3 || got.back() != 3) {
      throw std::runtime_error(str("the sum is ", got.front(), ", want 3"));
    }
    device.release(plain);
  });
  INFO(run.describe());
  REQUIRE(run.allOk());
  requireNothingLeft(run, 2);
  INFO(ledgerReport(2));
  CHECK(standin::ledger().violations.load() == 0);
  for (int r = 0; r < 2; ++r) {
    const standin::RankRecord& l = standin::record(r);
    CHECK(l.window_ops.load() == 1);  // the window's first only
    // The window's first and the plain buffer's (the communicator's own first, on memory in no
    // window, ran before it held a window).
    CHECK(l.ops_on_window_comms.load() == 2);
  }
}

// What the runtime's agreement prevents, as NCCL would meet it: one rank's buffer in a window,
// its peer's in none, in one all-reduce. The stand-in records it as a violation (NCCL would hang
// or corrupt), naming both placements.
TEST_CASE("an all-reduce whose buffer is in a window on one rank only is a violation", "[coll]") {
  const auto factory = standinFactory();
  const RankRun run = launchRanks(*factory, 2, [](RankContext& ctx) {
    NcclCommunicator& nccl = ncclOf(ctx);
    Device& device = ctx.device();
    Waiter waiter = ctx.waiter("windows");
    void* window = adoptedWindow(ctx, 4096, waiter);
    void* plain = device.allocate(4096);
    AllReduceArgs args{ctx.rank() == 0 ? window : plain, 16, DType::Float32, ReduceOp::Sum};
    args.window_call = true;
    nccl.allReduce(args, waiter);
    device.synchronize(waiter);
    device.release(plain);
  });
  INFO(run.describe());
  CHECK_THAT(standin::violationLog(), Catch::Matchers::Contains("in window 0 at offset 0") &&
                                          Catch::Matchers::Contains("in no window"));
  CHECK(standin::ledger().violations.load() >= 1);
}

TEST_CASE("SYNK_NCCL_WINDOWS=0 and a single rank have no windows", "[coll]") {
  const auto factory = standinFactory();
  setenv("SYNK_NCCL_WINDOWS", "0", 1);
  const RankRun off = launchRanks(*factory, 2, [](RankContext& ctx) {
    if (ncclOf(ctx).hasWindows()) throw std::runtime_error("windows with SYNK_NCCL_WINDOWS=0");
  });
  unsetenv("SYNK_NCCL_WINDOWS");
  INFO(off.describe());
  CHECK(off.allOk());
  const RankRun one = launchRanks(*factory, 1, [](RankContext& ctx) {
    if (ncclOf(ctx).hasWindows()) throw std::runtime_error("windows on one rank");
  });
  INFO(one.describe());
  CHECK(one.allOk());
}

}  // namespace
}  // namespace synk::test

namespace synk::test {

TEST_CASE("over several nodes, two ranks of a node on one device are refused before any fork",
          "[coll]") {
  // The stand-in binds devices as cuda does; the span says node 1 of 2, 2 ranks each.
  BackendRegistry registry;
  registry.add(standinFactory());
  NodeSpan span;
  span.nodes = 2;
  span.node = 1;
  span.ranks_per_node = 2;
  ForkOptions options;
  options.backend = "nccl-standin";
  options.n_parallel = 4;
  options.devices = {0, 1, 3, 3};  // node 1's ranks 2 and 3 on one device
  try {
    forkSession(options, std::move(registry), nullptr, span);
    FAIL("a shared device over several nodes was not refused");
  } catch (const InvalidArgument& e) {
    CHECK_THAT(e.what(), Catch::Contains("fork: ranks 2 and 3 of node 1 would share nccl-standin "
                                         "device 3: over several nodes every collective is"));
  }
}

}  // namespace synk::test
