#include "synk/core/barrier.h"

#include <immintrin.h>
#include <sched.h>

#include <algorithm>

#include "synk/core/error.h"
#include "synk/core/process/control/process_state.h"

namespace synk {
namespace {

// Longest single futex sleep: bounds how late a sleeper notices a dead peer or the deadline.
constexpr auto kSleepSlice = std::chrono::milliseconds(10);

}  // namespace

const char* barrierSiteName(uint32_t site) {
  switch (static_cast<BarrierSite>(site)) {
    case BarrierSite::Startup:
      return "startup";
    case BarrierSite::CommandStart:
      return "command start";
    case BarrierSite::CommandEnd:
      return "command end";
    case BarrierSite::Agree:
      return "agree";
    case BarrierSite::Exchange:
      return "exchange";
    case BarrierSite::CollectiveIn:
      return "collective in";
    case BarrierSite::CollectiveOut:
      return "collective out";
    case BarrierSite::Teardown:
      return "teardown";
    case BarrierSite::Window:
      return "window";
  }
  return "unknown";
}

Barrier::Barrier(ControlBlock& cb, int rank, int n_ranks, std::chrono::microseconds spin,
                 bool yield)
    : cb_(&cb), rank_(rank), n_(n_ranks), spin_(spin), yield_(yield) {}

std::byte* Barrier::outbox(size_t bytes) {
  SYNK_CHECK(bytes <= kExchangeBytes, "a barrier exchange of ", bytes,
             " bytes exceeds the control block's ", kExchangeBytes);
  RankSlot& me = cb_->slot(rank_);
  const size_t next = (epoch_ + 1) & 1;
  me.exchange_bytes[next] = std::max(me.exchange_bytes[next], static_cast<uint32_t>(bytes));
  return me.exchange[next];
}

const std::byte* Barrier::exchangeOf(int rank) const {
  return cb_->slot(rank).exchange[epoch_ & 1];
}

bool Barrier::okOf(int rank) const {
  return cb_->slot(rank).ok[epoch_ & 1] != 0;
}

bool Barrier::arrive(Waiter& waiter, BarrierSite site, bool ok) {
  const uint64_t epoch = ++epoch_;
  RankSlot& me = cb_->slot(rank_);
  me.ok[epoch & 1] = ok ? 1 : 0;
  me.site[epoch & 1] = static_cast<uint32_t>(site);
  me.arrived.store(epoch, std::memory_order_seq_cst);
  if (cb_->sleepers.load(std::memory_order_seq_cst) > 0) wakeSleepers(*cb_);
  waitForAll(waiter, epoch);
  // The next barrier's count starts at nothing (outbox raises it): the area of that parity still
  // holds what this rank published two barriers ago, which must not travel again.
  me.exchange_bytes[(epoch + 1) & 1] = 0;
  checkSites(epoch, static_cast<uint32_t>(site));
  bool all_ok = true;
  for (int r = 0; r < n_; ++r)
    all_ok = all_ok && cb_->slot(r).ok[epoch & 1] != 0;
  return all_ok;
}

bool Barrier::allArrived(uint64_t epoch, int& first_missing) const {
  while (first_missing < n_ &&
         cb_->slot(first_missing).arrived.load(std::memory_order_acquire) >= epoch) {
    ++first_missing;
  }
  return first_missing == n_;
}

void Barrier::waitForAll(Waiter& waiter, uint64_t epoch) {
  int first_missing = 0;
  if (allArrived(epoch, first_missing)) return;
  // Spin phase: a peer that is about to arrive costs a cache-line transfer, not a syscall.
  const auto spin_until = Clock::now() + spin_;
  for (unsigned iter = 1; !allArrived(epoch, first_missing); ++iter) {
    if (yield_) {
      sched_yield();
    } else {
      _mm_pause();
    }
    if ((iter & 255) == 0) {
      waiter.check();
      if (Clock::now() >= spin_until) break;
    }
  }
  // Sleep phase: announce a sleeper, re-check, then sleep until a wake or a slice ends.
  while (!allArrived(epoch, first_missing)) {
    waiter.check();
    const auto now = Clock::now();
    if (now >= waiter.deadline()) timeOut(waiter, epoch);
    cb_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t word = cb_->wake_word.load(std::memory_order_seq_cst);
    if (!allArrived(epoch, first_missing)) {
      const auto slice = std::min<Clock::duration>(kSleepSlice, waiter.deadline() - now);
      futexWait(cb_->wake_word, word, std::chrono::duration_cast<std::chrono::nanoseconds>(slice));
    }
    cb_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

void Barrier::timeOut(Waiter& waiter, uint64_t epoch) {
  std::string missing, stopped;
  for (int r = 0; r < n_; ++r) {
    RankSlot& slot = cb_->slot(r);
    if (slot.arrived.load(std::memory_order_acquire) < epoch) {
      missing += str(missing.empty() ? "" : ", ", r);
      if (const std::string note = stoppedNote(slot.pid.load()); !note.empty()) {
        stopped += str("; rank ", r, note);
      }
      slot.late.store(1, std::memory_order_release);
    }
  }
  abortSession(*cb_, AbortReason::Timeout, rank_,
               str("rank ", rank_, " timed out at ", waiter.what(), ": rank(s) ", missing,
                   " did not arrive before the deadline", stopped, missingNodes(epoch)));
  throwAborted(*cb_);
}

std::string Barrier::missingNodes(uint64_t epoch) const {
  const int per_node = cb_->ranks_per_node;
  if (per_node <= 0) return {};
  std::string nodes;
  bool whole = false;
  for (int node = 0; node * per_node < n_; ++node) {
    int late = 0;
    for (int r = node * per_node; r < std::min((node + 1) * per_node, n_); ++r)
      late += cb_->slot(r).arrived.load(std::memory_order_acquire) < epoch ? 1 : 0;
    if (late == 0) continue;
    whole = whole || late == per_node;
    nodes += str(nodes.empty() ? "" : ", ", node, late == per_node ? " (all its ranks)" : "");
  }
  // A whole node late is most often its launcher gone (its ranks die with it; nothing of that
  // node is left to say so).
  return str("; on node(s) ", nodes, " of ", n_ / per_node,
             whole ? ": a node late whole may have lost its launcher process" : "");
}

void Barrier::checkSites(uint64_t epoch, uint32_t site) {
  for (int r = 0; r < n_; ++r) {
    const uint32_t other = cb_->slot(r).site[epoch & 1];
    if (other != site) {
      const std::string message =
          str("ranks diverged: rank ", rank_, " arrived at barrier '", barrierSiteName(site),
              "' while rank ", r, " arrived at '", barrierSiteName(other), "'");
      abortSession(*cb_, AbortReason::Fatal, rank_, message);
      throw InternalError(message);
    }
  }
}

}  // namespace synk
