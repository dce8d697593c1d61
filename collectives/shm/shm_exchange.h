#pragma once
// One collective's protocol on the ranks' shared-memory heaps (collectives/README.md, "The
// zero-copy heap protocol"): each rank publishes where the buffers it exposes live, passes
// CollectiveIn, works on its peers' buffers mapped into its own address space, passes
// CollectiveOut, then copies staged outputs back. A failure on any rank makes every rank throw,
// naming it. Two communicators run it: the shared-memory one (one machine: every rank reachable)
// and the node communicator (several nodes: the barrier spans every node, but only the ranks of
// this node share its memory, so only theirs are resolved).
#include <cstddef>
#include <exception>
#include <span>
#include <vector>

#include "synk/core/control_block.h"
#include "synk/core/shm_heap.h"

namespace synk {

class ProcessGroup;
class Waiter;

namespace shm_detail {

// Throws InvalidArgument when `bytes` are needed from a null `pointer`.
void requireBuffer(const void* pointer, size_t bytes, const char* what, const char* which);

}  // namespace shm_detail

class ShmExchange {
 public:
  // A buffer this rank lets its peers reach during one collective.
  struct Exposed {
    const void* user = nullptr;  // the caller's buffer
    size_t bytes = 0;
    bool input = false;          // peers read it: a staged copy is filled before it is published
    bool output = false;         // peers write it: a staged copy is copied back afterwards
    std::byte* local = nullptr;  // the address used: the caller's buffer or its staged copy
    bool staged = false;
  };
  // Every reachable rank's exposed buffers, mapped into this process: at(rank, k) (null if none,
  // or the rank is outside the reachable ones).
  struct Peers {
    std::byte* const* base;
    size_t slots;
    std::byte* at(int rank, size_t k) const { return base[static_cast<size_t>(rank) * slots + k]; }
  };

  // The barrier outbox: a failure's message first, then the locations.
  static constexpr size_t kErrorBytes = 1024;
  // Location slots one collective can publish in one barrier exchange.
  static constexpr size_t kMaxSlots = (kExchangeBytes - kErrorBytes) / sizeof(ShmLocation);

  // Ranks [first, end) share this process's memory; `group` and `heap` outlive the exchange.
  ShmExchange(ProcessGroup& group, ShmHeap& heap, int first, int end);
  ~ShmExchange();
  ShmExchange(const ShmExchange&) = delete;
  ShmExchange& operator=(const ShmExchange&) = delete;

  // Publishes `mine` (in `slots` location slots, the same number on every rank), passes
  // CollectiveIn, runs work(peers), passes CollectiveOut, then copies staged outputs back.
  template <typename Work>
  void run(const char* what, Waiter& waiter, std::span<Exposed> mine, size_t slots, Work&& work) {
    enter(what, waiter, mine, slots);
    std::exception_ptr failure;
    try {
      work(resolve(mine, slots));
    } catch (...) {
      failure = std::current_exception();
    }
    leave(what, waiter, mine, failure);
  }

  // Takes part in a collective as a rank that failed before it (see
  // ShmCommunicator::failOnThisRank), then rethrows `failure`.
  [[noreturn]] void failOnThisRank(Waiter& waiter, std::exception_ptr failure);

 private:
  void enter(const char* what, Waiter& waiter, std::span<Exposed> mine, size_t slots);
  Peers resolve(std::span<Exposed> mine, size_t slots);
  void leave(const char* what, Waiter& waiter, std::span<Exposed> mine, std::exception_ptr failure);
  void expose(const char* what, std::span<Exposed> mine);
  [[noreturn]] void throwPeerFailure(const char* what) const;
  std::byte* workspace(size_t bytes);

  ProcessGroup& group_;
  ShmHeap& heap_;
  int first_;
  int end_;
  std::vector<ShmLocation> locations_;  // what this rank publishes, reused across calls
  std::vector<std::byte*> peers_;       // size() x slots, reused across calls
  // Heap memory that stands in for caller buffers outside the heap; grows, never shrinks.
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace synk
