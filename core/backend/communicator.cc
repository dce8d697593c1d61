#include "synk/core/communicator.h"

#include <cstdint>

#include "synk/core/error.h"

namespace synk {

void Communicator::checkRoot(int root, const char* what) const {
  if (root < 0 || root >= size_) {
    throw InvalidArgument(str(name(), " ", what, ": root ", root, " is not a rank of ", size_));
  }
}

size_t Communicator::partOffsets(const std::vector<size_t>& counts, const char* what) {
  if (static_cast<int>(counts.size()) != size_) {
    throw InvalidArgument(
        str(name(), " ", what, ": ", counts.size(), " counts given for ", size_, " ranks"));
  }
  offsets_.assign(1, 0);
  for (const size_t count : counts)
    offsets_.push_back(offsets_.back() + count);
  return offsets_.back();
}

// Messages are built only when something is refused: these run on the step path.

void Communicator::allReduce(const AllReduceArgs& args, Waiter& waiter) {
  if (!isCollectiveOp(args.op, args.dtype)) {
    checkCollectiveOp(args.op, args.dtype, str(name(), " all_reduce"));
  }
  if (args.count == 0) return;  // every rank has the same count: all return together
  doAllReduce(args, waiter);
}

void* Communicator::allocateWindow(size_t /*bytes*/, Waiter& /*waiter*/) {
  throw InternalError(str(name(), " communicator has no windows"));
}

bool Communicator::Window::holds(const void* buffer, size_t n) const {
  // As integers: comparing pointers into unrelated allocations is unspecified in C++.
  const auto at = reinterpret_cast<uintptr_t>(buffer);
  const auto first = reinterpret_cast<uintptr_t>(begin);
  return at >= first && at + n <= first + bytes;
}

int64_t Communicator::windowOf(const void* buffer, size_t bytes) const {
  for (size_t i = 0; i < recorded_windows_.size(); ++i) {
    if (recorded_windows_[i].holds(buffer, bytes)) return static_cast<int64_t>(i);
  }
  return -1;
}

void Communicator::allReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) {
  list_.clear();
  for (const AllReduceArgs& args : list) {
    if (!isCollectiveOp(args.op, args.dtype)) {
      checkCollectiveOp(args.op, args.dtype, str(name(), " all_reduce"));
    }
    if (args.send != nullptr && args.send != args.buffer) {
      throw InvalidArgument(str(name(), " all_reduce list: entries work in place (send is set)"));
    }
    if (args.count > 0) list_.push_back(args);
  }
  if (list_.empty()) return;
  if (list_.size() == 1) return doAllReduce(list_[0], waiter);
  doAllReduceList(list_, waiter);
}

void Communicator::doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) {
  for (const AllReduceArgs& args : list)
    doAllReduce(args, waiter);
}

void Communicator::reduce(const ReduceArgs& args, Waiter& waiter) {
  if (!isCollectiveOp(args.op, args.dtype)) {
    checkCollectiveOp(args.op, args.dtype, str(name(), " reduce"));
  }
  checkRoot(args.root, "reduce");
  if (args.count == 0) return;
  doReduce(args, waiter);
}

void Communicator::broadcast(const BroadcastArgs& args, Waiter& waiter) {
  checkRoot(args.root, "broadcast");
  if (args.count == 0) return;
  doBroadcast(args, waiter);
}

void Communicator::gather(const GatherArgs& args, Waiter& waiter) {
  checkRoot(args.root, "gather");
  if (partOffsets(args.counts, "gather") == 0) return;
  doGather(args, offsets_, waiter);
}

void Communicator::allGather(const AllGatherArgs& args, Waiter& waiter) {
  if (partOffsets(args.counts, "all_gather") == 0) return;
  doAllGather(args, offsets_, waiter);
}

}  // namespace synk
