// core/barrier.h without a session. Threads of one process share a control block as ranks do
// (the barrier only needs the shared words): nobody passes before the last arrival, exchanges and
// ok flags, the spin and the futex paths, a deadline naming the missing rank, ranks at different
// sites. A dead peer needs real processes: ProcessGroup forks them and is the master's liveness
// probe, which names the rank and how it died.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "synk/core/barrier.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {
namespace {

using namespace std::chrono_literals;

// A control block for n ranks on the heap, for threads.
class LocalControlBlock {
 public:
  explicit LocalControlBlock(int n_ranks) {
    const size_t bytes = (ControlBlock::bytesFor(n_ranks) + 63) / 64 * 64;
    memory_ = std::aligned_alloc(64, bytes);
    std::memset(memory_, 0, bytes);
    cb_ = new (memory_) ControlBlock();
    cb_->n_ranks = n_ranks;
    cb_->master_pid = getpid();
    for (int r = 0; r < n_ranks; ++r)
      new (&cb_->slot(r)) RankSlot{};
  }
  ~LocalControlBlock() { std::free(memory_); }
  LocalControlBlock(const LocalControlBlock&) = delete;
  LocalControlBlock& operator=(const LocalControlBlock&) = delete;
  ControlBlock& operator*() { return *cb_; }

 private:
  void* memory_;
  ControlBlock* cb_;
};

Waiter waiterFor(ControlBlock& cb, std::chrono::milliseconds timeout, std::string what) {
  return Waiter(cb, nullptr, Clock::now() + timeout, std::move(what));
}

// Runs fn(rank) on n threads and joins them.
template <typename Fn>
void onThreads(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(fn, r);
  for (auto& t : threads)
    t.join();
}

TEST_CASE(
    "barrier: an outbox publishes how many bytes peers read, for the barrier it is filled for",
    "[core]") {
  // What crosses nodes is the count (cluster/node_bridge.h): the largest a rank asked for before
  // arriving, in the slot of that barrier's parity, and nothing at a barrier it filled none for.
  LocalControlBlock cb(1);
  Barrier barrier(*cb, 0, 1, 0us);
  Waiter waiter = waiterFor(*cb, 10s, "outbox");
  RankSlot& slot = (*cb).slot(0);
  barrier.outbox(24);
  barrier.outbox(8);  // a smaller second part does not shrink it
  CHECK(slot.exchange_bytes[1] == 24);
  barrier.arrive(waiter, BarrierSite::Exchange);  // epoch 1 (parity 1)
  CHECK(slot.exchange_bytes[1] == 24);            // peers still read it until the next arrival
  barrier.outbox(100);
  barrier.arrive(waiter, BarrierSite::Exchange);  // epoch 2 (parity 0)
  CHECK(slot.exchange_bytes[0] == 100);
  CHECK(slot.exchange_bytes[1] == 0);             // reset for epoch 3, which fills nothing
  barrier.arrive(waiter, BarrierSite::Exchange);  // epoch 3 (parity 1)
  CHECK(slot.exchange_bytes[1] == 0);
  CHECK_THROWS_WITH(barrier.outbox(kExchangeBytes + 1),
                    Catch::Contains("exceeds the control block's"));
}

TEST_CASE(
    "barrier: nobody passes before the last arrival, and every rank reads every exchange and ok "
    "flag",
    "[core]") {
  const int n = GENERATE(1, 2, 4);
  const auto spin = GENERATE(0us, 200us);  // 0: every wait sleeps on the futex
  const bool yield = GENERATE(false, true);
  LocalControlBlock cb(n);
  constexpr int kRounds = 200;
  std::atomic<int> arrivals{0};
  std::atomic<int> early{0}, wrong_exchange{0}, wrong_ok{0}, errors{0};
  onThreads(n, [&](int rank) {
    try {
      Barrier barrier(*cb, rank, n, spin, yield);
      Waiter waiter = waiterFor(*cb, 10s, "round");
      for (int round = 0; round < kRounds; ++round) {
        const int64_t mine = rank * 100000 + round;
        std::memcpy(barrier.outbox(sizeof mine), &mine, sizeof mine);
        // Rank n-1 reports a failure every 7th round: every rank must see it.
        const bool ok = !(rank == n - 1 && round % 7 == 0);
        arrivals.fetch_add(1);
        const bool all_ok = barrier.arrive(waiter, BarrierSite::Exchange, ok);
        if (arrivals.load() < n * (round + 1)) early.fetch_add(1);
        if (all_ok != (round % 7 != 0)) wrong_ok.fetch_add(1);
        if (barrier.okOf(n - 1) != (round % 7 != 0)) wrong_ok.fetch_add(1);
        for (int r = 0; r < n; ++r) {
          int64_t theirs;
          std::memcpy(&theirs, barrier.exchangeOf(r), sizeof theirs);
          if (theirs != r * 100000 + round) wrong_exchange.fetch_add(1);
        }
      }
      if (barrier.epoch() != kRounds) errors.fetch_add(1);
    } catch (...) {
      errors.fetch_add(1);
    }
  });
  CHECK(errors == 0);
  CHECK(early == 0);
  CHECK(wrong_ok == 0);
  CHECK(wrong_exchange == 0);
  CHECK(arrivals == n * kRounds);
  CHECK((*cb).abort.load() == 0);
}

TEST_CASE("barrier: a rank that does not arrive is named at the deadline", "[core]") {
  LocalControlBlock cb(3);
  std::atomic<bool> rank1_passed{false};
  std::string error;
  auto started = Clock::now();
  Clock::duration waited{};
  onThreads(2, [&](int rank) {
    Barrier barrier(*cb, rank, 3, 50us);
    Waiter waiter = waiterFor(*cb, rank == 0 ? 100ms : 10s, "the start of command 'call f'");
    try {
      barrier.arrive(waiter, BarrierSite::CommandStart);
      if (rank == 1) rank1_passed = true;
    } catch (const Timeout& e) {
      if (rank == 0) {
        waited = Clock::now() - started;
        error = e.what();
      }
    } catch (const std::exception& e) {
      if (rank == 0) error = str("not a Timeout: ", e.what());
    }
  });
  CHECK(error ==
        "rank 0 timed out at the start of command 'call f': rank(s) 2 did not arrive before the "
        "deadline");
  CHECK(waited >= 100ms);
  CHECK(waited < 5s);
  CHECK_FALSE(rank1_passed);  // the other waiter left with the abort, long before its deadline
  CHECK((*cb).abort.load() == static_cast<uint32_t>(AbortReason::Timeout));
  CHECK((*cb).slot(2).late.load() == 1);
  CHECK((*cb).slot(1).late.load() == 0);
}

TEST_CASE("barrier: ranks at different sites are reported as diverged", "[core]") {
  LocalControlBlock cb(2);
  std::string errors[2];
  onThreads(2, [&](int rank) {
    Barrier barrier(*cb, rank, 2, 50us);
    Waiter waiter = waiterFor(*cb, 10s, "step");
    try {
      barrier.arrive(waiter, rank == 0 ? BarrierSite::Agree : BarrierSite::CollectiveIn);
    } catch (const InternalError& e) {
      errors[rank] = e.what();
    } catch (const std::exception& e) {
      errors[rank] = str("not an InternalError: ", e.what());
    }
  });
  CHECK(
      errors[0] ==
      "ranks diverged: rank 0 arrived at barrier 'agree' while rank 1 arrived at 'collective in'");
  CHECK(
      errors[1] ==
      "ranks diverged: rank 1 arrived at barrier 'collective in' while rank 0 arrived at 'agree'");
  CHECK((*cb).abort.load() == static_cast<uint32_t>(AbortReason::Fatal));
  CHECK(std::string(barrierSiteName(99)) == "unknown");
}

// Forked ranks: the barrier across processes, and the master's probe naming a dead worker.
ProcessGroupOptions groupOf(int n) {
  ProcessGroupOptions options;
  options.n_ranks = n;
  options.timeout = 10s;
  options.spin = 50us;
  options.yield_while_spinning = true;
  return options;
}

TEST_CASE("barrier across forked processes: every rank sees every exchange", "[core]") {
  constexpr int kRounds = 100;
  // Each rank publishes (its value, how many wrong values it read in the last round).
  auto round = [](ProcessGroup& group, Waiter& waiter, int k, int64_t& wrong) {
    Barrier& barrier = group.barrier();
    const int64_t out[2] = {group.rank() * 1000 + k, wrong};
    std::memcpy(barrier.outbox(sizeof out), out, sizeof out);
    barrier.arrive(waiter, BarrierSite::Exchange);
    int64_t reported = 0;
    for (int r = 0; r < group.size(); ++r) {
      int64_t in[2];
      std::memcpy(in, barrier.exchangeOf(r), sizeof in);
      if (in[0] != r * 1000 + k) ++wrong;
      reported += in[1];
    }
    return reported;
  };
  auto group = ProcessGroup::create(groupOf(3), [&](ProcessGroup& g) {
    Waiter waiter = g.commandWaiter("rounds");
    int64_t wrong = 0;
    for (int k = 0; k < kRounds; ++k)
      round(g, waiter, k, wrong);
    return 0;
  });
  Waiter waiter = group->commandWaiter("rounds");
  int64_t wrong = 0, reported_by_all = 0;
  for (int k = 0; k < kRounds; ++k)
    reported_by_all += round(*group, waiter, k, wrong);
  CHECK(wrong == 0);
  CHECK(reported_by_all == 0);
  CHECK_FALSE(group->aborted());
}

TEST_CASE("barrier: a worker that dies before arriving is named, with how it died", "[core]") {
  const bool killed = GENERATE(false, true);
  // At once, or once the master sleeps on the futex (it announces itself in the control block):
  // a sleeper, too, must notice within milliseconds rather than at the deadline.
  const bool while_asleep = GENERATE(false, true);
  auto group = ProcessGroup::create(groupOf(2), [=](ProcessGroup& g) -> int {
    const auto give_up = Clock::now() + 5s;
    while (while_asleep && g.control().sleepers.load() == 0 && Clock::now() < give_up) {
    }
    if (killed) raise(SIGKILL);
    return 3;  // exits without arriving
  });
  Waiter waiter = group->commandWaiter("command 'call f'");
  const auto started = Clock::now();
  std::string error;
  int failed_rank = -1;
  try {
    group->barrier().arrive(waiter, BarrierSite::CommandStart);
  } catch (const PeerFailure& e) {
    error = e.what();
    failed_rank = e.rank();
  }
  CHECK(Clock::now() - started < 2s);  // the probe, not the 10 s deadline
  const std::string how = killed ? ") was killed by signal 9 (SIGKILL" : ") exited with code 3";
  CHECK_THAT(error, Catch::StartsWith("rank 1 (pid ") && Catch::Contains(how));
  CHECK(failed_rank == 1);
  CHECK(group->aborted());
}

}  // namespace
}  // namespace synk
