#pragma once
// Collectives through NCCL, on the rank's CUDA stream (the `native = true` path).
//
// Creation (collective, once per session, inside BackendFactory::create): the master rank calls
// ncclGetUniqueId and publishes it in its barrier outbox; every rank passes one Exchange barrier
// and reads it; then ncclCommInitRankConfig with blocking = 0, polled to completion. The
// communicator is non-blocking so that no thread is ever trapped inside NCCL and ncclCommAbort
// can be called at any point (NCCL user guide, "Fault Tolerance"): every call may answer
// ncclInProgress, and is then polled (ncclCommGetAsyncError) to completion with the Waiter.
//
// Fault contract. NCCL does not notice a dead intra-node peer
// (../shared/notes/research-reliability.md 1.1): a collective whose peer died never completes and
// ncclCommGetAsyncError keeps saying ncclSuccess. The master notices the death (waitpid) and marks
// the session aborted; every survivor is waiting in a poll loop (CudaDevice::synchronize, or here),
// whose Waiter::check() throws; the runtime then calls Backend::abort(), which calls abort() here:
// ncclCommAbort, bounded by kAbortBound (NCCL issues #829/#1777: abort itself can hang), after
// which workers exit and the master goes on with the session closed. Every surviving rank must
// abort, never destroy, its communicator (NVIDIA/nccl #863).
//
// Two communicators. A non-blocking communicator launches every operation from a helper thread
// (NCCL 2.28: ~55 us per call, measured), so collectives run on `fast_`, a child split off the
// non-blocking one with blocking = 1: the split runs under the parent's non-blocking mode (still
// abortable), and NCCL_RUNTIME_CONNECT=0 (set unless the user set it) makes it connect every
// channel during that split, so a later enqueue never waits for a peer inside NCCL. Point-to-point
// calls (whose peer connections are always made on first use) are never used: gather is an
// all-gather.
//
// Normal close (destructor), every rank at once (the session's Quit step): drain this rank's
// stream; a teardown barrier where every rank reports that it drained (no rank destroys its
// communicators while a peer's last collective may still read from its buffers); then
// ncclCommFinalize of the non-blocking communicator (polled, at most kFinalizeBound), an abort of
// the idle blocking child (which never waits) and a destroy of the parent. A rank that could not
// drain, the session aborted, or the destructor running while an exception unwinds: every
// communicator is aborted instead.
//
// Windows (Communicator::allocateWindow, NCCL 2.27 symmetric memory): ncclMemAlloc'd memory
// registered with ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) on a third communicator,
// `windows_`, a blocking child split off the parent at the first window, which runs only the
// all-reduces of calls that agreed on windows (AllReduceArgs::window_call: there every buffer lies
// in an agreed window or in none, on every rank). Every other collective stays on fast_, where
// nothing is registered, so no rank ever mixes symmetric and ordinary kernels in one collective
// (a variable's storage may hold a window on some ranks only). Registration is collective and waits
// for every rank inside NCCL (a blocking communicator): allocateWindow first has every rank
// allocate and agree through the barrier, then registers, so every rank reaches the
// registration. Windows are freed after close's finalize; an aborted communicator leaves them to
// the process exit. SYNK_NCCL_WINDOWS=0 turns windows off.
//
// Every NCCL call goes through an NcclApi table (nccl_api.h) and the device through NcclDevice
// (nccl_device.h), so CI drives this class against an NCCL stand-in without a GPU.
#include <nccl.h>

#include <chrono>
#include <vector>

#include "synk/collectives/cuda/nccl/nccl_api.h"
#include "synk/collectives/cuda/nccl/nccl_device.h"
#include "synk/core/communicator.h"
#include "synk/core/device_buffer.h"

namespace synk {

class Device;
class ProcessGroup;

class NcclCommunicator final : public Communicator {
 public:
  // Collective over every rank of `group`; `waiter` bounds the id exchange and the init.
  NcclCommunicator(ProcessGroup& group, NcclDevice& device, Waiter& waiter,
                   const NcclApi& nccl = systemNccl());
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  const char* name() const override { return "nccl"; }

  // The communicator collectives run on (handed to plugins too).
  ncclComm_t comm() const { return fast_ != nullptr ? fast_ : comm_; }
  // The non-blocking communicator (creation and the split run on it); comm() when there is no
  // child.
  ncclComm_t parent() const { return comm_; }
  // ncclCommAbort of the children (windows, fast), then the parent, each waited for at most
  // kAbortBound; marks the device aborted (nothing may wait on its stream after); idempotent.
  void abort() noexcept;
  // Forgets the communicators without calling NCCL (the CUDA runtime is already gone at exit);
  // still takes part in the teardown barrier, as not drained, so the peers abort theirs.
  void abandon() noexcept;

  // Several ranks, NCCL 2.27 or later, the blocking child, no setting turning windows off.
  bool hasWindows() const override { return windows_allowed_ && !aborted_; }
  // Collective (see the class comment). nullptr on every rank where some rank could not
  // allocate the memory or the windows communicator could not be made (hasWindows() is then
  // false from there on, on every rank alike).
  void* allocateWindow(size_t bytes, Waiter& waiter) override;
  // The communicator a windowed call's all-reduces run on (null until the first window).
  ncclComm_t windowsComm() const { return windows_; }

  static constexpr std::chrono::seconds kAbortBound{5};
  static constexpr std::chrono::seconds kFinalizeBound{10};
  static constexpr std::chrono::seconds kSplitBound{60};

 protected:
  // Each op is enqueued on the device stream and returns without waiting for the GPU (unless
  // NCCL answered ncclInProgress: then it waits until the op is enqueued).
  void doAllReduce(const AllReduceArgs& args, Waiter& waiter) override;
  // One ncclGroupStart/End around an ncclAllReduce per buffer: one launch for the whole list.
  void doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) override;
  void doReduce(const ReduceArgs& args, Waiter& waiter) override;
  void doBroadcast(const BroadcastArgs& args, Waiter& waiter) override;
  // An all-gather on the blocking communicator into the root's result (a scratch buffer on the
  // other ranks): the root's ingress bounds it as it bounds a gather.
  void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                Waiter& waiter) override;
  // ncclAllGather when every count is equal, else one grouped ncclBroadcast per rank into its
  // offset (exact for unequal counts).
  void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                   Waiter& waiter) override;

 private:
  void exchangeUniqueId(Waiter& waiter, ncclUniqueId* id);
  // Turns a call's result into success or NcclError. A call on the non-blocking communicator
  // is always polled until the communicator's state leaves ncclInProgress, whatever it
  // returned: see complete() in the .cc.
  void complete(ncclComm_t comm, ncclResult_t issued, const char* what, Waiter& waiter);
  [[noreturn]] void fail(ncclComm_t comm, ncclResult_t result, const char* what) const;
  void splitFastCommunicator(Waiter& waiter);
  // Hands the device the communicators its waits poll for asynchronous errors (NcclDevice): at
  // the end of construction and once the windows' is split; abort, abandon and the destructor
  // detach them.
  void attachToDevice() { gpu_.attachNccl(comm(), parent(), windows_); }
  // A blocking child of the parent, split off by every rank at once (bounded by kSplitBound);
  // null on every rank if any rank could not make it (`what` names it in the warning).
  ncclComm_t splitBlockingChild(const char* name, const char* what, Waiter& waiter);
  void freeWindows() noexcept;
  // allocateWindow's body; anything it throws ends the session (see there).
  void* makeWindow(size_t bytes, Waiter& waiter);
  // NCCL's reduction for `op` here; scale_after: a 1/n scaling pass must follow (avg).
  ncclRedOp_t reductionFor(ReduceOp op, bool& scale_after) const;
  // Waits (bounded, no Waiter: used at close) until the stream has no queued work.
  bool drainStream() noexcept;
  // Every rank arrives with whether it drained; true if all did (see the class comment).
  bool teardownBarrier(bool drained) noexcept;
  void close() noexcept;
  void finalize();

  ProcessGroup& group_;
  const NcclApi& nccl_;
  NcclDevice& gpu_;
  Device& device_;
  ncclComm_t comm_ = nullptr;     // non-blocking: creation, the parent of fast_
  ncclComm_t fast_ = nullptr;     // blocking child: every other collective
  ncclComm_t windows_ = nullptr;  // blocking child: windowed calls' all-reduces (on demand)
  bool windows_allowed_ = false;
  bool aborted_ = false;
  DeviceBuffer gather_scratch_;  // non-root gathers land here, and windows_' first all-reduce
};

}  // namespace synk
