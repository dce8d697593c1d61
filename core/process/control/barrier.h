#pragma once
// The n-rank barrier every step of synk is guarded by.
//
// Each rank owns one cache line holding the barrier epoch it has reached; arriving is one store,
// waiting is reading the peers' lines (with n <= 16 this beats a shared counter: no contended
// read-modify-write, and a missing rank is known by name). Waiters spin for a short budget, which
// keeps a command round trip in the microseconds, then sleep on a futex so idle ranks cost no
// CPU. Every wait is bounded by its Waiter: a deadline, the session's abort flag and the peers'
// liveness.
//
// Each arrival also carries a site code and an ok flag. Ranks compare sites after passing: if
// one rank is at a different barrier than the others the program diverged, which is reported
// (and aborts the session) instead of silently pairing the wrong barriers.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/control_block.h"
#include "synk/core/waiter.h"

namespace synk {

enum class BarrierSite : uint32_t {
  Startup = 1,
  CommandStart,
  CommandEnd,
  Agree,
  Exchange,
  CollectiveIn,
  CollectiveOut,
  Teardown,  // backends closing device communicators (every rank drained its work)
  Window,    // a communicator agreeing on windows (Communicator::allocateWindow)
};
const char* barrierSiteName(uint32_t site);

class Barrier {
 public:
  // yield: give the core away while spinning (more ranks than hardware threads: a spinning rank
  // would hold the core the rank it waits for needs).
  Barrier(ControlBlock& cb, int rank, int n_ranks, std::chrono::microseconds spin,
          bool yield = false);

  // Arrives with this rank's ok flag and waits for every rank. Returns true if every rank
  // arrived ok. Throws Timeout naming the missing ranks when the waiter's deadline passes,
  // PeerFailure if the session aborts meanwhile, InternalError if ranks arrived at different
  // sites. The last three abort the session.
  bool arrive(Waiter& waiter, BarrierSite site, bool ok = true);

  // Exchange area this rank fills with (at least) its first `bytes` before its next arrive();
  // after that arrive() returns, every rank reads it with exchangeOf(rank) until the arrive()
  // after the next. The count is published with the bytes: on several nodes only that many
  // travel to the other nodes (cluster/node_bridge.h), so it must cover every byte peers read.
  // Throws InternalError past kExchangeBytes.
  std::byte* outbox(size_t bytes);
  const std::byte* exchangeOf(int rank) const;
  // ok flag of `rank` at the barrier last passed.
  bool okOf(int rank) const;

  int rank() const { return rank_; }
  int size() const { return n_; }
  uint64_t epoch() const { return epoch_; }

 private:
  void waitForAll(Waiter& waiter, uint64_t epoch);
  bool allArrived(uint64_t epoch, int& first_missing) const;
  [[noreturn]] void timeOut(Waiter& waiter, uint64_t epoch);
  // Over several nodes: which nodes the ranks missing at `epoch` belong to (empty on one node).
  std::string missingNodes(uint64_t epoch) const;
  void checkSites(uint64_t epoch, uint32_t site);

  ControlBlock* cb_;
  int rank_;
  int n_;
  std::chrono::microseconds spin_;
  bool yield_;
  uint64_t epoch_ = 0;
};

}  // namespace synk
