#include "collectives/cuda/nccl_communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "collectives/cuda/cuda_check.h"
#include "collectives/cuda/cuda_device.h"
#include "collectives/cuda/gpu_wait.h"
#include "collectives/cuda/nccl_types.h"
#include "core/error.h"
#include "core/process_group.h"

// ncclCommSplit under a non-blocking parent needs 2.18, NCCL_RUNTIME_CONNECT 2.22.
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 22, 0)
#error "synk's cuda backend needs NCCL 2.22 or later"
#endif

namespace synk {
namespace {

constexpr int kOldestNccl = NCCL_VERSION(2, 22, 0);

static_assert(sizeof(ncclUniqueId) <= kExchangeBytes, "the NCCL id must fit a barrier exchange");

// ncclGroupStart/End as a scope: a group left open by an exception is closed on the way out, so
// this thread's NCCL group depth stays balanced (the session aborts after such an error anyway).
class NcclGroup {
 public:
  NcclGroup() { SYNK_NCCL_CHECK(ncclGroupStart()); }
  ~NcclGroup() {
    if (open_) (void)ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  ncclResult_t end() {
    open_ = false;
    return ncclGroupEnd();
  }

 private:
  bool open_ = true;
};

// Inside a group calls only queue work: ncclGroupEnd reports the group's outcome.
void queued(ncclResult_t result, const char* what, int rank, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw NcclError(
      str("rank ", rank, ": ", what, " failed: ", cuda_detail::describeNccl(result, comm)));
}

// ncclCommAbort on a helper thread, waited for at most `bound`: an abort stuck in NCCL must not
// keep the process from going on (the thread is left behind; it ends with the process).
void abortWithin(ncclComm_t comm, std::chrono::seconds bound, int rank) noexcept {
  struct State {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    ncclResult_t result = ncclSuccess;
  };
  std::shared_ptr<State> state;
  try {
    state = std::make_shared<State>();
    std::thread([comm, state] {
      const ncclResult_t result = ncclCommAbort(comm);
      std::lock_guard<std::mutex> lock(state->mutex);
      state->done = true;
      state->result = result;
      state->finished.notify_all();
    }).detach();
  } catch (...) {
    (void)ncclCommAbort(comm);  // no thread to be had: abort inline
    return;
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  if (!state->finished.wait_for(lock, bound, [&] { return state->done; })) {
    std::fprintf(stderr,
                 "synk: rank %d: ncclCommAbort did not return within %lld s; leaving it behind\n",
                 rank, static_cast<long long>(bound.count()));
  } else if (state->result != ncclSuccess) {
    std::fprintf(stderr, "synk: rank %d: ncclCommAbort returned %s\n", rank,
                 ncclGetErrorString(state->result));
  }
}

// ncclAvg multiplies every input by 1/n before summing. With n a power of two that is exact, and
// equals summing then scaling; otherwise (3 ranks: 1/3) it rounds every input, so avg is a sum
// followed by one scaling pass, the arithmetic of the host-staged path (identical results).
bool premultiplyIsExact(int ranks) {
  return ranks > 0 && (ranks & (ranks - 1)) == 0;
}

}  // namespace

NcclCommunicator::NcclCommunicator(ProcessGroup& group, CudaDevice& device, Waiter& waiter)
    : group_(group), device_(device), rank_(group.rank()), size_(group.size()) {
  offsets_.reserve(static_cast<size_t>(size_) + 1);
  int version = 0;  // the library loaded may be older than the headers built against
  if (ncclGetVersion(&version) != ncclSuccess || version < kOldestNccl) {
    throw NcclError(str("rank ", rank_, ": NCCL ", version, " is loaded; synk needs ", kOldestNccl,
                        " (2.22) or later"));
  }
  // A blocking communicator must never connect lazily: a lazy connect waits on the peer inside
  // NCCL, where no deadline reaches. Connect every channel at creation instead (abortable there);
  // NCCL reads the setting once per process, at its first communicator: set before any. It stays
  // set (unsetting it later would race with getenv in NCCL's own threads).
  const char* user_connect = std::getenv("NCCL_RUNTIME_CONNECT");
  const bool split_allowed = user_connect == nullptr || std::strcmp(user_connect, "0") == 0;
  if (!split_allowed) {
    std::fprintf(stderr,
                 "synk: rank %d: NCCL_RUNTIME_CONNECT=%s asks for lazy connections, which a "
                 "blocking communicator would wait for without a deadline: collectives use the "
                 "non-blocking communicator (slower per call)\n",
                 rank_, user_connect);
  }
  if (user_connect == nullptr) setenv("NCCL_RUNTIME_CONNECT", "0", 1);
  ncclUniqueId id{};
  exchangeUniqueId(waiter, &id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call returns at once; ncclCommAbort works at any point
  config.commName = "synk";
  // NCCL binds the communicator to the calling thread's current device.
  SYNK_CUDA_CHECK(cudaSetDevice(device.ordinal()));
  const ncclResult_t started = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  try {
    complete(started, "ncclCommInitRankConfig (creating the NCCL communicator)", waiter);
    if (split_allowed) splitFastCommunicator(waiter);
  } catch (...) {
    abort();  // a half-made communicator must be aborted, never destroyed
    throw;
  }
}

void NcclCommunicator::splitFastCommunicator(Waiter& waiter) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.commName = "synk-fast";
  // Under the parent's non-blocking mode the split is a job of the parent, run on an NCCL
  // thread that writes the child's handle into `slot` when it finishes. If we stop waiting
  // first, that thread may still write it later: the slot is then leaked, never freed under it.
  auto* slot = new ncclComm_t(nullptr);
  const ncclResult_t started = ncclCommSplit(comm_, 0, rank_, slot, &config);
  std::string why;
  if (started == ncclSuccess || started == ncclInProgress) {
    // The parent's state carries the job's outcome, and reading it joins the job (until then
    // the parent refuses every other call). A failure or a timeout here is fatal: the parent is
    // unusable or busy, so there is nothing to fall back to (the caller aborts it).
    Waiter bounded(group_.control(), &group_,
                   std::min(waiter.deadline(), Clock::now() + kSplitBound), waiter.what());
    complete(comm_, started, "ncclCommSplit (creating the blocking communicator)", bounded);
    fast_ = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    delete slot;
    ncclResult_t child = ncclInternalError;
    if (fast_ == nullptr) {
      why = "the split returned no communicator";
    } else if (ncclCommGetAsyncError(fast_, &child) != ncclSuccess || child != ncclSuccess) {
      why = str("the new communicator reports ", ncclGetErrorString(child));
    }
  } else {
    delete slot;  // refused before any job started
    why = ncclGetErrorString(started);
  }
  // Use it only if every rank has it: ranks on different communicators would never match up.
  if (group_.barrier().arrive(waiter, BarrierSite::Exchange, why.empty())) return;
  std::fprintf(stderr,
               "synk: rank %d: a rank could not create the blocking NCCL communicator (here: %s); "
               "collectives use the non-blocking one (slower per call)\n",
               rank_, why.empty() ? "created" : why.c_str());
  if (fast_ != nullptr) abortWithin(fast_, kAbortBound, rank_);
  fast_ = nullptr;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ == nullptr && fast_ == nullptr) return;
  device_.attachNccl(nullptr, nullptr);
  // Unwinding after an error, or the session is going down: peers may never finalize.
  if (group_.aborted() || std::uncaught_exceptions() > 0) {
    abort();
  } else {
    finalize();
  }
}

void NcclCommunicator::finalize() noexcept {
  try {
    // ncclCommFinalize flushes this rank's NCCL work and stops its proxy; it does not wait for
    // other ranks. Not a Waiter: at close the master may mark the session "closed"
    // (AbortReason::Shutdown) as soon as its own teardown is done, and peers that finished exit,
    // which a liveness probe would report as deaths. Only a real failure (a death, a timeout, a
    // fatal error elsewhere) or the bound stops the wait.
    const ControlBlock& control = group_.control();
    const auto deadline = Clock::now() + kFinalizeBound;
    // This rank's stream drains first, so none of its collectives is still running when the
    // communicators go. (A peer may still be finishing its side of the last one: the buffers it
    // maps from this rank stay alive until it unmaps them, NCCL's IPC handles being refcounted.)
    if (!drainStream()) throw Timeout("the GPU stream did not drain before closing NCCL");
    const ncclResult_t started = ncclCommFinalize(comm_);
    if (started != ncclSuccess && started != ncclInProgress) {
      throw NcclError(str("ncclCommFinalize: ", cuda_detail::describeNccl(started, comm_)));
    }
    while (true) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t queried = ncclCommGetAsyncError(comm_, &state);
      if (queried != ncclSuccess) state = queried;
      if (state == ncclSuccess) break;
      if (state != ncclInProgress) {
        throw NcclError(str("ncclCommFinalize: ", cuda_detail::describeNccl(state, comm_)));
      }
      const uint32_t reason = control.abort.load(std::memory_order_acquire);
      if (reason != 0 && reason != static_cast<uint32_t>(AbortReason::Shutdown)) {
        throw PeerFailure(control.abort_rank, "the session was aborted during ncclCommFinalize");
      }
      if (Clock::now() >= deadline) {
        throw Timeout(
            str("ncclCommFinalize did not complete within ", kFinalizeBound.count(), " s"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (fast_ != nullptr) {
      // Idle here now: aborting frees it without waiting for anyone.
      const ncclComm_t fast = fast_;
      fast_ = nullptr;
      abortWithin(fast, kAbortBound, rank_);
    }
    // State is ncclSuccess: does not block. Forgotten first: after a failed destroy the handle
    // may be freed, and abort() must not touch it.
    const ncclComm_t comm = comm_;
    comm_ = nullptr;
    SYNK_NCCL_CHECK(ncclCommDestroy(comm));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synk: rank %d: closing NCCL failed (%s); aborting the communicator\n",
                 rank_, e.what());
    abort();
  }
}

void NcclCommunicator::abort() noexcept {
  if ((comm_ == nullptr && fast_ == nullptr) || aborted_) return;
  aborted_ = true;
  device_.attachNccl(nullptr, nullptr);
  const ncclComm_t fast = fast_;
  const ncclComm_t comm = comm_;
  fast_ = nullptr;
  comm_ = nullptr;
  // One after the other, each bounded: a hung child abort still lets the parent's run.
  if (fast != nullptr) abortWithin(fast, kAbortBound, rank_);
  if (comm != nullptr) abortWithin(comm, kAbortBound, rank_);
  // The stream may hold work that never finishes (a collective whose peer is gone): nothing
  // after this may wait for it, the device's own teardown included.
  device_.markAborted();
}

bool NcclCommunicator::drainStream() noexcept {
  const auto deadline = Clock::now() + kFinalizeBound;
  const ControlBlock& control = group_.control();
  while (Clock::now() < deadline) {
    const cudaError_t state = cudaStreamQuery(device_.stream());
    if (state == cudaSuccess) return true;
    if (state != cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    const uint32_t reason = control.abort.load(std::memory_order_acquire);
    if (reason != 0 && reason != static_cast<uint32_t>(AbortReason::Shutdown)) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return false;
}

void NcclCommunicator::exchangeUniqueId(Waiter& waiter, ncclUniqueId* id) {
  Barrier& barrier = group_.barrier();
  const int master = group_.masterRank();
  if (rank_ == master) {
    const ncclResult_t result = ncclGetUniqueId(id);
    if (result == ncclSuccess) std::memcpy(barrier.outbox(), id, sizeof(*id));
    // Arrive either way, with the outcome as the ok flag: the peers fail at once instead of
    // waiting for the deadline.
    barrier.arrive(waiter, BarrierSite::Exchange, result == ncclSuccess);
    if (result != ncclSuccess) {
      throw NcclError(str("rank ", rank_, ": ncclGetUniqueId failed: ",
                          cuda_detail::describeNccl(result, nullptr)));
    }
    return;
  }
  barrier.arrive(waiter, BarrierSite::Exchange, true);
  if (!barrier.okOf(master)) {
    throw NcclError(str("rank ", rank_, ": no NCCL communicator: the master rank ", master,
                        " could not create the NCCL unique id"));
  }
  std::memcpy(id, barrier.exchangeOf(master), sizeof(*id));
}

void NcclCommunicator::complete(ncclComm_t comm, ncclResult_t issued, const char* what,
                                Waiter& waiter) {
  if (issued == ncclSuccess) return;
  if (issued != ncclInProgress) {
    throw NcclError(
        str("rank ", rank_, ": ", what, " failed: ", cuda_detail::describeNccl(issued, comm)));
  }
  // Not enqueued yet: nothing may be issued on the stream (or the communicator) until the
  // communicator's state leaves ncclInProgress (NCCL user guide, "Nonblocking Group Operation").
  pollUntil(waiter, rank_, what, [&] {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm, &state);
    if (queried != ncclSuccess) state = queried;
    if (state == ncclInProgress) return false;
    if (state != ncclSuccess) {
      throw NcclError(
          str("rank ", rank_, ": ", what, " failed: ", cuda_detail::describeNccl(state, comm)));
    }
    return true;
  });
}

void NcclCommunicator::allReduce(const AllReduceArgs& args, Waiter& waiter) {
  if (args.count == 0) return;
  checkCollectiveOp(args.op, args.dtype, "nccl all_reduce");
  const bool scale_after = args.op == ReduceOp::Avg && !premultiplyIsExact(size_);
  complete(comm(),
           ncclAllReduce(args.buffer, args.buffer, args.count, ncclTypeOf(args.dtype),
                         scale_after ? ncclSum : ncclOpOf(args.op), comm(), device_.stream()),
           "ncclAllReduce", waiter);
  if (scale_after) device_.scale(args.buffer, args.count, args.dtype, 1.0 / size_);
}

void NcclCommunicator::reduce(const ReduceArgs& args, Waiter& waiter) {
  if (args.count == 0) return;
  checkCollectiveOp(args.op, args.dtype, "nccl reduce");
  checkRoot(args.root, size_, "nccl reduce");
  if (rank_ == args.root && args.recv == nullptr) {
    throw InvalidArgument("nccl reduce: no receive buffer at the root");
  }
  // Off the root NCCL never touches recvbuff; hand it a valid pointer all the same.
  void* recv = args.recv != nullptr ? args.recv : const_cast<void*>(args.send);
  const bool scale_after = args.op == ReduceOp::Avg && !premultiplyIsExact(size_);
  complete(
      comm(),
      ncclReduce(args.send, recv, args.count, ncclTypeOf(args.dtype),
                 scale_after ? ncclSum : ncclOpOf(args.op), args.root, comm(), device_.stream()),
      "ncclReduce", waiter);
  if (scale_after && rank_ == args.root) {
    device_.scale(recv, args.count, args.dtype, 1.0 / size_);
  }
}

void NcclCommunicator::broadcast(const BroadcastArgs& args, Waiter& waiter) {
  if (args.count == 0) return;
  checkRoot(args.root, size_, "nccl broadcast");
  complete(comm(),
           ncclBroadcast(args.buffer, args.buffer, args.count, ncclTypeOf(args.dtype), args.root,
                         comm(), device_.stream()),
           "ncclBroadcast", waiter);
}

// On the non-blocking communicator: send/recv connect each peer pair on first use, which must
// stay abortable.
void NcclCommunicator::gather(const GatherArgs& args, Waiter& waiter) {
  partOffsets(args.counts, size_, "nccl gather", offsets_);
  checkRoot(args.root, size_, "nccl gather");
  if (offsets_.back() == 0) return;
  const ncclDataType_t type = ncclTypeOf(args.dtype);
  const size_t element = dtypeSize(args.dtype);
  cudaStream_t stream = device_.stream();
  if (rank_ != args.root) {
    const size_t mine = args.counts[rank_];
    if (mine > 0) {
      complete(ncclSend(args.send, mine, type, args.root, comm_, stream), "ncclSend (gather)",
               waiter);
    }
    return;
  }
  if (args.recv == nullptr) throw InvalidArgument("nccl gather: no receive buffer at the root");
  char* recv = static_cast<char*>(args.recv);
  // The root's own part: a device copy, ordered before the receives on the same stream.
  char* own = recv + offsets_[rank_] * element;
  const size_t own_bytes = args.counts[rank_] * element;
  if (own_bytes > 0 && own != args.send) {
    SYNK_CUDA_CHECK(cudaMemcpyAsync(own, args.send, own_bytes, cudaMemcpyDeviceToDevice, stream));
  }
  NcclGroup group;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || args.counts[r] == 0) continue;  // zero counts: skipped on both sides
    queued(ncclRecv(recv + offsets_[r] * element, args.counts[r], type, r, comm_, stream),
           "ncclRecv (gather)", rank_, comm_);
  }
  complete(group.end(), "ncclGroupEnd (gather)", waiter);
}

void NcclCommunicator::allGather(const AllGatherArgs& args, Waiter& waiter) {
  partOffsets(args.counts, size_, "nccl all_gather", offsets_);
  if (offsets_.back() == 0) return;
  if (args.recv == nullptr) throw InvalidArgument("nccl all_gather: no receive buffer");
  const ncclDataType_t type = ncclTypeOf(args.dtype);
  cudaStream_t stream = device_.stream();
  const bool equal = std::all_of(args.counts.begin(), args.counts.end(),
                                 [&](size_t count) { return count == args.counts[0]; });
  if (equal) {
    complete(comm(), ncclAllGather(args.send, args.recv, args.counts[0], type, comm(), stream),
             "ncclAllGather", waiter);
    return;
  }
  // Unequal parts: every rank broadcasts its part straight into its offset of every recv.
  const size_t element = dtypeSize(args.dtype);
  char* recv = static_cast<char*>(args.recv);
  NcclGroup group;
  for (int r = 0; r < size_; ++r) {
    if (args.counts[r] == 0) continue;
    char* part = recv + offsets_[r] * element;
    const void* source = r == rank_ ? args.send : part;  // sendbuff is read at the root only
    queued(ncclBroadcast(source, part, args.counts[r], type, r, comm(), stream),
           "ncclBroadcast (all_gather)", rank_, comm());
  }
  complete(comm(), group.end(), "ncclGroupEnd (all_gather)", waiter);
}

}  // namespace synk
