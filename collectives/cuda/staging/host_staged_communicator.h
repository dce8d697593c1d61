#pragma once
// Collectives without NCCL (the `native = false` path): each rank copies its device buffer into a
// host staging buffer on its shared-memory heap, the shared-memory communicator (collectives/shm)
// runs the collective on the staging buffers, and the result is copied back to the device.
//
// Staging buffers come from the rank's ShmHeap, whose segments the backend pins with
// cudaHostRegister as they are created (ShmHeap::setSegmentObserver), so both copies are pinned
// DMA at ~55 GB/s (../shared/ANCHORS.md) and the shm collective reads them in place (no further
// copy). They are reused across calls and grow on demand (doubling), never per call.
//
// Results equal the NCCL path's whenever the arithmetic is exact (the shm reduction adds in rank
// order, NCCL in ring/tree order; float rounding may differ in the last place otherwise).
//
// Cost per call: one device-to-host copy of the input, a poll until it landed, the shm collective
// (two barriers), one host-to-device copy of the result, left in flight on the stream like an
// NCCL op. Before touching a staging buffer on the host the device is always synchronised, so a
// previous call's host-to-device copy can never read a buffer the next collective is writing.
#include <cstddef>

#include "synk/collectives/cuda/staging/staged_pipeline.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/communicator.h"

namespace synk {

class CudaDevice;
class ProcessGroup;
class ShmHeap;

class HostStagedCommunicator final : public Communicator {
 public:
  // `group`, `heap` and `device` must outlive the communicator.
  HostStagedCommunicator(ProcessGroup& group, ShmHeap& heap, CudaDevice& device);
  ~HostStagedCommunicator() override;
  HostStagedCommunicator(const HostStagedCommunicator&) = delete;
  HostStagedCommunicator& operator=(const HostStagedCommunicator&) = delete;

  const char* name() const override { return "host-staged"; }

 protected:
  // Buffers of StagedAllReduce::kMinBytes and more are pipelined (staged_pipeline.h); smaller
  // ones go through one copy out, the shared-memory reduction and one copy in.
  void doAllReduce(const AllReduceArgs& args, Waiter& waiter) override;
  // Every buffer staged into one host buffer (one device synchronisation before and after the
  // copies), one shared-memory list collective, one copy back per buffer.
  void doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) override;
  void doReduce(const ReduceArgs& args, Waiter& waiter) override;
  void doBroadcast(const BroadcastArgs& args, Waiter& waiter) override;
  void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                Waiter& waiter) override;
  void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                   Waiter& waiter) override;

 private:
  struct Staging {
    void* data = nullptr;
    size_t bytes = 0;
  };
  // A staging buffer of at least `bytes`. Call only after the device was synchronised (a buffer
  // given back to the heap must not be read by a copy still in flight).
  void* reserve(Staging& staging, size_t bytes);
  template <typename Stage>
  void stage(Waiter& waiter, Stage&& work);

  ShmHeap& heap_;
  CudaDevice& device_;
  ShmCommunicator shm_;
  StagedAllReduce pipeline_;  // all_reduce of StagedAllReduce::kMinBytes and more
  Staging first_;             // the input (and in-place result) staging buffer
  Staging second_;            // the gather results
  GatherArgs gather_args_;    // the staged arguments, reused across calls
  AllGatherArgs all_gather_args_;
  std::vector<AllReduceArgs> list_args_;
};

}  // namespace synk
