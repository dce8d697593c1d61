#pragma once
// Collectives of the cpu backend (and of the cuda backend's host-staged path) on the ranks'
// shared-memory heaps, without copies through an intermediate buffer: each rank publishes where
// its buffers live, then reads and writes its peers' buffers directly. The protocol and the
// algorithms are described in collectives/README.md.
#include <array>
#include <cstddef>
#include <exception>
#include <span>
#include <vector>

#include "core/communicator.h"

namespace synk {

class ProcessGroup;
class ShmHeap;

class ShmCommunicator final : public Communicator {
 public:
  // `group` and `heap` must outlive the communicator.
  ShmCommunicator(ProcessGroup& group, ShmHeap& heap);
  ~ShmCommunicator() override;
  ShmCommunicator(const ShmCommunicator&) = delete;
  ShmCommunicator& operator=(const ShmCommunicator&) = delete;

  const char* name() const override { return "shm"; }

  void allReduce(const AllReduceArgs& args, Waiter& waiter) override;
  void reduce(const ReduceArgs& args, Waiter& waiter) override;
  void broadcast(const BroadcastArgs& args, Waiter& waiter) override;
  void gather(const GatherArgs& args, Waiter& waiter) override;
  void allGather(const AllGatherArgs& args, Waiter& waiter) override;

  // For a caller that wraps these collectives (the host-staged path) and failed on this rank
  // before it could call one: takes part in the collective as a rank that failed (its peers
  // throw RankError naming it, nobody waits for the deadline), then rethrows `failure`. Every
  // rank must be entering the same collective with a nonzero count.
  [[noreturn]] void failOnThisRank(Waiter& waiter, std::exception_ptr failure);

 private:
  static constexpr int kMaxExposed = 2;

  // A buffer this rank lets its peers reach during one collective.
  struct Exposed {
    const void* user = nullptr;  // the caller's buffer
    size_t bytes = 0;
    bool input = false;          // peers read it: a staged copy is filled before it is published
    bool output = false;         // peers write it: a staged copy is copied back afterwards
    std::byte* local = nullptr;  // the address used: the caller's buffer or its staged copy
    bool staged = false;
  };
  // peers[rank][k]: rank's k-th exposed buffer, mapped into this process (null if none).
  using Peers = std::vector<std::array<std::byte*, kMaxExposed>>;

  // Publishes `mine`, passes CollectiveIn, runs work(peers) on the peers' buffers, passes
  // CollectiveOut, then copies staged outputs back. A failure on any rank makes every rank throw.
  template <typename Work>
  void run(const char* what, Waiter& waiter, std::span<Exposed> mine, Work&& work);
  void expose(const char* what, std::span<Exposed> mine);
  [[noreturn]] void throwPeerFailure(const char* what) const;
  std::byte* workspace(size_t bytes);

  ProcessGroup& group_;
  ShmHeap& heap_;
  int rank_;
  int n_;
  Peers peers_;
  std::vector<size_t> offsets_;  // gather offsets, reused across calls
  // Heap memory that stands in for caller buffers outside the heap; grows, never shrinks.
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace synk
