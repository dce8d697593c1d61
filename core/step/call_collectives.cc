#include "synk/core/step/call_collectives.h"

#include <algorithm>
#include <cstddef>

#include "synk/core/communicator.h"
#include "synk/core/device.h"
#include "synk/core/error.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process_group.h"
#include "synk/core/session/rank_resources.h"

namespace synk::detail {

void InCallCollectives::allReduce(void* buffer, size_t count, DType dtype, ReduceOp op) {
  if (!waiter_ && !local_) {
    throw UsageError("a model's all_reduce runs only during one of its calls");
  }
  checkCollectiveOp(op, dtype, "a model's all_reduce");
  if (local_) return;  // one participant: the result is its own value
  AllReduceArgs args;
  args.buffer = buffer;
  args.count = count;
  args.dtype = dtype;
  args.op = op;
  const size_t bytes = count * dtypeSize(dtype);
  if (windows_ != nullptr) {
    args.window_call = true;
    args.in_window = inWindow(buffer, bytes);
    // Every rank's buffer must lie in the same agreed window or in none: NCCL picks its kernels
    // from each rank's own registrations, so a window here and none on a peer would leave the
    // two in different kernels. The buffers a model writes (its updates, outputs and own
    // memory) are kept out of other windows by the agreement; a read (const) is never reduced.
    const auto* last = static_cast<const std::byte*>(buffer) + (bytes == 0 ? 0 : bytes - 1);
    Communicator& comm = *rank_.default_communicator;
    if (!args.in_window && (comm.windowOf(buffer, 1) >= 0 || comm.windowOf(last, 1) >= 0)) {
      // Fatal, not this call's error alone: the peers may already be inside this all-reduce,
      // where only the step's deadline would free them.
      const std::string why = str("rank ", rank_.rank, ": a model's all_reduce of ", bytes,
                                  " bytes lies in a window its call did not agree on (all-reduce "
                                  "only the call's updates, outputs or the model's own memory; "
                                  "a read is const)");
      abortSession(rank_.group->control(), AbortReason::Fatal, rank_.rank, why);
      throw PluginError(why);
    }
    if (args.in_window && stepTimesOn()) ++currentStepTimes().window_all_reduces;
  }
  rank_.default_communicator->allReduce(args, *waiter_);  // host-staged where ranks share a GPU
}

bool InCallCollectives::inWindow(const void* buffer, size_t bytes) const {
  return std::any_of(windows_->begin(), windows_->end(),
                     [&](const WindowSpan& w) { return w.holds(buffer, bytes); });
}

void InCallCollectives::allGather(const void* send, void* recv, size_t count, DType dtype) {
  if (!waiter_ && !local_) {
    throw UsageError("a model's all_gather runs only during one of its calls");
  }
  if (count == 0) return;
  if (local_) {  // one participant: the result is its own part
    rank_.device->copy(recv, send, count * dtypeSize(dtype), CopyKind::DeviceToDevice);
    return;
  }
  AllGatherArgs args;
  args.send = send;
  args.recv = recv;
  args.counts.assign(static_cast<size_t>(rank_.size), count);
  args.dtype = dtype;
  rank_.default_communicator->allGather(args, *waiter_);
}

}  // namespace synk::detail
