#include "synk/collectives/cuda/staging/host_staged_communicator.h"

#include <algorithm>

#include "synk/collectives/cuda/device/cuda_device.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"

namespace synk {
namespace {

constexpr size_t kMinStagingBytes = size_t{1} << 20;

// Staged buffers of a list start on the heap's alignment, as separately allocated ones would.
size_t roundUp(size_t bytes) {
  return (bytes + ShmHeap::kAlignment - 1) / ShmHeap::kAlignment * ShmHeap::kAlignment;
}

}  // namespace

HostStagedCommunicator::HostStagedCommunicator(ProcessGroup& group, ShmHeap& heap,
                                               CudaDevice& device)
    : Communicator(group.rank(), group.size()),
      heap_(heap),
      device_(device),
      shm_(group, heap),
      pipeline_(group, heap, device) {}

HostStagedCommunicator::~HostStagedCommunicator() {
  // A copy may still be in flight after an abort: then the memory is left to the process exit.
  if (device_.aborted()) return;
  heap_.release(first_.data);
  heap_.release(second_.data);
}

void* HostStagedCommunicator::reserve(Staging& staging, size_t bytes) {
  if (bytes <= staging.bytes) return staging.data;
  const size_t grown = std::max({bytes, 2 * staging.bytes, kMinStagingBytes});
  void* data = heap_.allocate(grown);  // pinned by the segment observer
  heap_.release(staging.data);
  staging = {data, grown};
  return data;
}

// Runs this rank's staging (checks, copies to the host); if it fails, the rank still takes part
// in the shm collective as a failed rank, so its peers fail at once, naming it, and stay in step.
template <typename Stage>
void HostStagedCommunicator::stage(Waiter& waiter, Stage&& work) {
  try {
    work();
  } catch (...) {
    shm_.failOnThisRank(waiter, std::current_exception());
  }
}

// The entry points (core/communicator.h) checked the arguments; the shared-memory collective runs
// on the staging buffers without checking them again.
void HostStagedCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  void* host = nullptr;
  if (bytes >= StagedAllReduce::kMinBytes && size() > 1) {
    bool ok = true;
    try {
      // A staging buffer that grows goes back to the heap: no copy may still read it.
      if (bytes > first_.bytes) device_.synchronize(waiter);
      host = reserve(first_, bytes);
    } catch (const std::exception& e) {
      if (dynamic_cast<const Timeout*>(&e) || dynamic_cast<const PeerFailure*>(&e)) throw;
      ok = false;  // every rank fails the collective, naming this one
    }
    pipeline_.run(args, host, ok, waiter);
    return;
  }
  stage(waiter, [&] {
    device_.synchronize(waiter);  // the last call's host-to-device copy has read the staging
    host = reserve(first_, bytes);
    device_.copy(host, args.send != nullptr ? args.send : args.buffer, bytes,
                 CopyKind::DeviceToHost);
    device_.synchronize(waiter);
  });
  AllReduceArgs staged = args;
  staged.buffer = host;
  staged.send = nullptr;  // in place on the staging buffer
  shm_.doAllReduce(staged, waiter);
  device_.copy(args.buffer, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) {
  list_args_.assign(list.begin(), list.end());
  stage(waiter, [&] {
    size_t total = 0;
    for (const AllReduceArgs& args : list)
      total += roundUp(args.count * dtypeSize(args.dtype));
    device_.synchronize(waiter);
    auto* host = static_cast<std::byte*>(reserve(first_, total));
    for (AllReduceArgs& staged : list_args_) {
      const size_t bytes = staged.count * dtypeSize(staged.dtype);
      device_.copy(host, staged.buffer, bytes, CopyKind::DeviceToHost);
      staged.buffer = host;
      host += roundUp(bytes);
    }
    device_.synchronize(waiter);
  });
  shm_.doAllReduceList(list_args_, waiter);
  for (size_t k = 0; k < list.size(); ++k) {
    device_.copy(list[k].buffer, list_args_[k].buffer, list[k].count * dtypeSize(list[k].dtype),
                 CopyKind::HostToDevice);
  }
}

void HostStagedCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  const bool root = rank() == args.root;
  const size_t bytes = args.count * dtypeSize(args.dtype);
  void* host = nullptr;
  stage(waiter, [&] {
    if (root && args.recv == nullptr) {
      throw InvalidArgument("host-staged reduce: no receive buffer at the root");
    }
    device_.synchronize(waiter);
    host = reserve(first_, bytes);
    device_.copy(host, args.send, bytes, CopyKind::DeviceToHost);
    device_.synchronize(waiter);
  });
  ReduceArgs staged = args;
  staged.send = host;
  staged.recv = root ? host : nullptr;  // reduced in place into the root's staging buffer
  shm_.doReduce(staged, waiter);
  if (root) device_.copy(args.recv, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  const bool root = rank() == args.root;
  const size_t bytes = args.count * dtypeSize(args.dtype);
  void* host = nullptr;
  stage(waiter, [&] {
    device_.synchronize(waiter);
    host = reserve(first_, bytes);
    if (root) {
      device_.copy(host, args.send != nullptr ? args.send : args.buffer, bytes,
                   CopyKind::DeviceToHost);
      device_.synchronize(waiter);
    }
  });
  BroadcastArgs staged = args;
  staged.buffer = host;
  staged.send = nullptr;  // in place on the staging buffer
  shm_.doBroadcast(staged, waiter);
  const bool out_of_place = args.send != nullptr && args.send != args.buffer;
  if (!root || out_of_place) device_.copy(args.buffer, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                                      Waiter& waiter) {
  const size_t total = offsets.back();
  const bool root = rank() == args.root;
  const size_t element = dtypeSize(args.dtype);
  const size_t part = args.counts[rank()] * element;
  GatherArgs& staged = gather_args_;  // reused: no per-call copy of the counts
  stage(waiter, [&] {
    if (root && args.recv == nullptr) {
      throw InvalidArgument("host-staged gather: no receive buffer at the root");
    }
    device_.synchronize(waiter);
    void* send = reserve(first_, std::max<size_t>(part, 1));
    void* recv = root ? reserve(second_, total * element) : nullptr;
    device_.copy(send, args.send, part, CopyKind::DeviceToHost);
    device_.synchronize(waiter);
    staged.send = send;
    staged.recv = recv;
  });
  staged.counts.assign(args.counts.begin(), args.counts.end());
  staged.dtype = args.dtype;
  staged.root = args.root;
  shm_.doGather(staged, offsets, waiter);
  if (root) device_.copy(args.recv, staged.recv, total * element, CopyKind::HostToDevice);
}

void HostStagedCommunicator::doAllGather(const AllGatherArgs& args,
                                         const std::vector<size_t>& offsets, Waiter& waiter) {
  const size_t total = offsets.back();
  const size_t element = dtypeSize(args.dtype);
  const size_t part = args.counts[rank()] * element;
  AllGatherArgs& staged = all_gather_args_;
  stage(waiter, [&] {
    if (args.recv == nullptr) throw InvalidArgument("host-staged all_gather: no receive buffer");
    device_.synchronize(waiter);
    void* send = reserve(first_, std::max<size_t>(part, 1));
    void* recv = reserve(second_, total * element);
    device_.copy(send, args.send, part, CopyKind::DeviceToHost);
    device_.synchronize(waiter);
    staged.send = send;
    staged.recv = recv;
  });
  staged.counts.assign(args.counts.begin(), args.counts.end());
  staged.dtype = args.dtype;
  shm_.doAllGather(staged, offsets, waiter);
  device_.copy(args.recv, staged.recv, total * element, CopyKind::HostToDevice);
}

}  // namespace synk
