#pragma once
// Collectives of the cpu backend (and of the cuda backend's host-staged path) on the ranks'
// shared-memory heaps, without copies through an intermediate buffer: each rank publishes where
// its buffers live, then reads and writes its peers' buffers directly. The protocol and the
// algorithms are described in collectives/README.md.
#include <cstddef>
#include <exception>
#include <span>
#include <vector>

#include "synk/collectives/shm/shm_exchange.h"
#include "synk/core/communicator.h"
#include "synk/core/shm_heap.h"

namespace synk {

class ProcessGroup;

class ShmCommunicator final : public Communicator {
 public:
  // `group` and `heap` must outlive the communicator.
  ShmCommunicator(ProcessGroup& group, ShmHeap& heap);
  ~ShmCommunicator() override;
  ShmCommunicator(const ShmCommunicator&) = delete;
  ShmCommunicator& operator=(const ShmCommunicator&) = delete;

  const char* name() const override { return "shm"; }

  // For a caller that wraps these collectives (the host-staged path) and failed on this rank
  // before it could call one: takes part in the collective as a rank that failed (its peers
  // throw RankError naming it, nobody waits for the deadline), then rethrows `failure`. Every
  // rank must be entering the same collective with a nonzero count.
  [[noreturn]] void failOnThisRank(Waiter& waiter, std::exception_ptr failure);

  // Buffers one list collective publishes in one barrier exchange; a longer list runs in rounds
  // of this many (two barriers each).
  static size_t maxListRound();

  // Windows (Communicator::allocateWindow) with SYNK_SHM_WINDOWS=1 only, for tests: shared
  // memory has no symmetric kernels, but the runtime's agreement on window buffers
  // (core/step/call_windows.cc) then runs on cpu ranks as it does on NCCL ranks. Heap memory,
  // released when the communicator goes.
  bool hasWindows() const override { return windows_on_ && size() > 1; }
  void* allocateWindow(size_t bytes, Waiter& waiter) override;
  // This process's windows and all-reduces in a window so far (tests read the master's).
  struct WindowCounts {
    int64_t windows = 0;
    int64_t all_reduces = 0;
  };
  static WindowCounts windowCounts();

 protected:
  // The host-staged communicator wraps these on its staging buffers: its entry points have
  // checked the arguments already.
  friend class HostStagedCommunicator;
  void doAllReduce(const AllReduceArgs& args, Waiter& waiter) override;
  void doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) override;
  void doReduce(const ReduceArgs& args, Waiter& waiter) override;
  void doBroadcast(const BroadcastArgs& args, Waiter& waiter) override;
  void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                Waiter& waiter) override;
  void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                   Waiter& waiter) override;

 private:
  // Location slots of a single collective (a send and a receive buffer).
  static constexpr size_t kSingleSlots = 2;
  using Exposed = ShmExchange::Exposed;
  using Peers = ShmExchange::Peers;

  void allReduceOutOfPlace(const AllReduceArgs& args, Waiter& waiter);
  void allReduceRound(std::span<const AllReduceArgs> round, size_t first_index, Waiter& waiter);

  ProcessGroup& group_;
  ShmHeap& heap_;
  ShmExchange exchange_;
  std::vector<Exposed> exposed_;  // a list collective's buffers, reused across calls
  bool windows_on_ = false;
};

}  // namespace synk
