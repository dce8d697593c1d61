#include "collectives/cuda/host_staged_communicator.h"

#include <algorithm>

#include "collectives/cuda/cuda_device.h"
#include "core/error.h"
#include "core/process_group.h"
#include "core/shm_heap.h"

namespace synk {
namespace {

constexpr size_t kMinStagingBytes = size_t{1} << 20;

}  // namespace

HostStagedCommunicator::HostStagedCommunicator(ProcessGroup& group, ShmHeap& heap,
                                               CudaDevice& device)
    : heap_(heap), device_(device), shm_(group, heap), rank_(group.rank()), size_(group.size()) {}

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

void HostStagedCommunicator::allReduce(const AllReduceArgs& args, Waiter& waiter) {
  if (args.count == 0) return;  // every rank has the same count: all skip together
  checkCollectiveOp(args.op, args.dtype, "host-staged all_reduce");
  const size_t bytes = args.count * dtypeSize(args.dtype);
  void* host = nullptr;
  stage(waiter, [&] {
    device_.synchronize(waiter);  // the last call's host-to-device copy has read the staging
    host = reserve(first_, bytes);
    device_.copy(host, args.buffer, bytes, CopyKind::DeviceToHost);
    device_.synchronize(waiter);
  });
  AllReduceArgs staged = args;
  staged.buffer = host;
  shm_.allReduce(staged, waiter);
  device_.copy(args.buffer, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::reduce(const ReduceArgs& args, Waiter& waiter) {
  if (args.count == 0) return;
  checkCollectiveOp(args.op, args.dtype, "host-staged reduce");
  checkRoot(args.root, size_, "host-staged reduce");
  const bool root = rank_ == args.root;
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
  shm_.reduce(staged, waiter);
  if (root) device_.copy(args.recv, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::broadcast(const BroadcastArgs& args, Waiter& waiter) {
  if (args.count == 0) return;
  checkRoot(args.root, size_, "host-staged broadcast");
  const bool root = rank_ == args.root;
  const size_t bytes = args.count * dtypeSize(args.dtype);
  void* host = nullptr;
  stage(waiter, [&] {
    device_.synchronize(waiter);
    host = reserve(first_, bytes);
    if (root) {
      device_.copy(host, args.buffer, bytes, CopyKind::DeviceToHost);
      device_.synchronize(waiter);
    }
  });
  BroadcastArgs staged = args;
  staged.buffer = host;
  shm_.broadcast(staged, waiter);
  if (!root) device_.copy(args.buffer, host, bytes, CopyKind::HostToDevice);
}

void HostStagedCommunicator::gather(const GatherArgs& args, Waiter& waiter) {
  partOffsets(args.counts, size_, "host-staged gather", offsets_);
  checkRoot(args.root, size_, "host-staged gather");
  const size_t total = offsets_.back();
  if (total == 0) return;
  const bool root = rank_ == args.root;
  const size_t element = dtypeSize(args.dtype);
  const size_t part = args.counts[rank_] * element;
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
  shm_.gather(staged, waiter);
  if (root) device_.copy(args.recv, staged.recv, total * element, CopyKind::HostToDevice);
}

void HostStagedCommunicator::allGather(const AllGatherArgs& args, Waiter& waiter) {
  partOffsets(args.counts, size_, "host-staged all_gather", offsets_);
  const size_t total = offsets_.back();
  if (total == 0) return;
  const size_t element = dtypeSize(args.dtype);
  const size_t part = args.counts[rank_] * element;
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
  shm_.allGather(staged, waiter);
  device_.copy(args.recv, staged.recv, total * element, CopyKind::HostToDevice);
}

}  // namespace synk
