#include "synk/collectives/cuda/nccl/nccl_communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "synk/collectives/cuda/nccl/gpu_wait.h"
#include "synk/collectives/cuda/nccl/nccl_types.h"
#include "synk/core/device.h"
#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/process_group.h"

// ncclCommSplit under a non-blocking parent needs 2.18, NCCL_RUNTIME_CONNECT 2.22.
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 22, 0)
#error "synk's cuda backend needs NCCL 2.22 or later"
#endif

namespace synk {
namespace {

constexpr int kOldestNccl = NCCL_VERSION(2, 22, 0);
constexpr int kWindowsNccl = NCCL_VERSION(2, 27, 0);  // ncclCommWindowRegister, symmetric kernels

static_assert(sizeof(ncclUniqueId) <= kExchangeBytes, "the NCCL id must fit a barrier exchange");

// ncclGroupStart/End as a scope: a group left open by an exception is closed on the way out, so
// this thread's NCCL group depth stays balanced (the session aborts after such an error anyway).
class NcclGroup {
 public:
  explicit NcclGroup(const NcclApi& nccl) : nccl_(nccl) {
    const ncclResult_t started = nccl_.groupStart();
    if (started != ncclSuccess) {
      throw NcclError(str("ncclGroupStart failed: ", describeNccl(nccl_, started, nullptr)));
    }
  }
  ~NcclGroup() {
    if (open_) (void)nccl_.groupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  ncclResult_t end() {
    open_ = false;
    return nccl_.groupEnd();
  }

 private:
  const NcclApi& nccl_;
  bool open_ = true;
};

// Inside a group calls only queue work: ncclGroupEnd reports the group's outcome.
void queued(const NcclApi& nccl, ncclResult_t result, const char* what, int rank, ncclComm_t comm) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw NcclError(str("rank ", rank, ": ", what, " failed: ", describeNccl(nccl, result, comm)));
}

// ncclCommAbort on a helper thread, waited for at most `bound`: an abort stuck in NCCL must not
// keep the process from going on (the thread is left behind; it ends with the process). False
// when it was left behind.
bool abortWithin(const NcclApi& nccl, ncclComm_t comm, std::chrono::seconds bound) noexcept {
  struct State {
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    ncclResult_t result = ncclSuccess;
  };
  std::shared_ptr<State> state;
  try {
    state = std::make_shared<State>();
    std::thread([&nccl, comm, state] {
      const ncclResult_t result = nccl.commAbort(comm);
      std::lock_guard<std::mutex> lock(state->mutex);
      state->done = true;
      state->result = result;
      state->finished.notify_all();
    }).detach();
  } catch (...) {
    (void)nccl.commAbort(comm);  // no thread to be had: abort inline
    return true;
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  if (!state->finished.wait_for(lock, bound, [&] { return state->done; })) {
    logWarning("ncclCommAbort did not return within ", bound.count(), " s; leaving it behind");
    return false;
  }
  if (state->result != ncclSuccess) {
    logWarning("ncclCommAbort returned ", nccl.getErrorString(state->result));
  }
  return true;
}

// ncclAvg multiplies every input by 1/n before summing. With n a power of two that is exact, and
// equals summing then scaling; otherwise (3 ranks: 1/3) it rounds every input, so avg is a sum
// followed by one scaling pass, the arithmetic of the host-staged path (identical results).
bool premultiplyIsExact(int ranks) {
  return ranks > 0 && (ranks & (ranks - 1)) == 0;
}

}  // namespace

NcclCommunicator::NcclCommunicator(ProcessGroup& group, NcclDevice& device, Waiter& waiter,
                                   const NcclApi& nccl)
    : Communicator(group.rank(), group.size()),
      group_(group),
      nccl_(nccl),
      gpu_(device),
      device_(device.device()) {
  int version = 0;  // the library loaded may be older than the headers built against
  if (nccl_.getVersion(&version) != ncclSuccess || version < kOldestNccl) {
    throw NcclError(str("rank ", rank(), ": ", nccl_.name, " ", version, " is loaded; synk needs ",
                        kOldestNccl, " (2.22) or later"));
  }
  // A blocking communicator must never connect lazily: a lazy connect waits on the peer inside
  // NCCL, where no deadline reaches. Connect every channel at creation instead (abortable there);
  // NCCL reads the setting once per process, at its first communicator: set before any. It stays
  // set (unsetting it later would race with getenv in NCCL's own threads).
  const char* user_connect = std::getenv("NCCL_RUNTIME_CONNECT");
  const bool split_allowed = user_connect == nullptr || std::strcmp(user_connect, "0") == 0;
  if (!split_allowed) {
    logWarning("NCCL_RUNTIME_CONNECT=", user_connect,
               " asks for lazy connections, which a blocking communicator would wait for without "
               "a deadline: collectives use the non-blocking communicator (slower per call)");
  }
  if (user_connect == nullptr) setenv("NCCL_RUNTIME_CONNECT", "0", 1);
  ncclUniqueId id{};
  exchangeUniqueId(waiter, &id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every call returns at once; ncclCommAbort works at any point
  config.commName = "synk";
  // NCCL binds the communicator to the calling thread's current device.
  gpu_.bindCallingThread();
  // NCCL writes the handle before the init job finishes, so a failure below can abort it.
  const ncclResult_t started = nccl_.commInitRankConfig(&comm_, size(), id, rank(), &config);
  try {
    if (comm_ == nullptr && (started == ncclSuccess || started == ncclInProgress)) {
      throw NcclError(str("rank ", rank(), ": ncclCommInitRankConfig returned no communicator"));
    }
    complete(comm_, started, "ncclCommInitRankConfig (creating the NCCL communicator)", waiter);
    if (split_allowed) splitFastCommunicator(waiter);
    // Windows only where every rank can have them (the environment and the library may differ
    // by node), agreed now: the ranks of a call take its window exchange or none do.
    // NCCL_WIN_ENABLE=0 and NCCL_CUMEM_ENABLE=0 leave NCCL without symmetric memory (its
    // registration then answers success with no window): off here too, before anyone registers.
    const auto set_to = [](const char* name, const char* value) {
      const char* v = std::getenv(name);
      return v != nullptr && std::strcmp(v, value) == 0;
    };
    const char* asked = std::getenv("SYNK_NCCL_WINDOWS");
    const bool asked_off = asked != nullptr && std::strcmp(asked, "0") == 0;
    if (asked != nullptr && !asked_off && std::strcmp(asked, "1") != 0) {
      logWarning("SYNK_NCCL_WINDOWS=", asked,
                 " is neither 0 nor 1: read as 1 (windows where possible)");
    }
    const bool here = fast_ != nullptr && size() > 1 && version >= kWindowsNccl &&
                      nccl_.commWindowRegister != nullptr && !asked_off &&
                      !set_to("NCCL_WIN_ENABLE", "0") && !set_to("NCCL_CUMEM_ENABLE", "0");
    windows_allowed_ = group_.barrier().arrive(waiter, BarrierSite::Window, here);
    attachToDevice();  // its waits poll these communicators' asynchronous errors from now on
  } catch (...) {
    abort();  // a half-made communicator must be aborted, never destroyed
    throw;
  }
}

void NcclCommunicator::splitFastCommunicator(Waiter& waiter) {
  fast_ = splitBlockingChild("synk-fast", "the blocking NCCL communicator", waiter);
  if (fast_ == nullptr) {
    logWarning("collectives use the non-blocking NCCL communicator (slower per call)");
  }
}

ncclComm_t NcclCommunicator::splitBlockingChild(const char* name, const char* what,
                                                Waiter& waiter) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.commName = name;
  // Under the parent's non-blocking mode the split is a job of the parent, run on an NCCL
  // thread that writes the child's handle into `slot` when it finishes; and NCCL 2.28 returns
  // ncclSuccess from ncclCommSplit while that job still runs (its group end answers
  // ncclInProgress, which the split does not pass on). So the slot is read only after the
  // parent's state left ncclInProgress: reading that state joins the job. If we stop waiting
  // first (failure, timeout), the thread may still write the slot later: it is then leaked,
  // never freed under the writer.
  auto* slot = new ncclComm_t(nullptr);
  const ncclResult_t started = nccl_.commSplit(comm_, 0, rank(), slot, &config);
  ncclComm_t child = nullptr;
  std::string why;
  if (started == ncclSuccess || started == ncclInProgress) {
    // A failure or a timeout here is fatal: the parent is unusable or busy, so there is nothing
    // to fall back to (the caller aborts it).
    Waiter bounded(group_.control(), &group_,
                   std::min(waiter.deadline(), Clock::now() + kSplitBound), waiter.what());
    complete(comm_, started, str("ncclCommSplit (creating ", what, ")").c_str(), bounded);
    child = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    delete slot;  // the job was joined: nobody writes it any more
    ncclResult_t state = ncclInternalError;
    if (child == nullptr) {
      why = "the split returned no communicator";
    } else if (nccl_.commGetAsyncError(child, &state) != ncclSuccess || state != ncclSuccess) {
      why = str("the new communicator reports ", nccl_.getErrorString(state));
    }
  } else {
    delete slot;  // refused before any job started
    why = nccl_.getErrorString(started);
  }
  // Use it only if every rank has it: ranks on different communicators would never match up.
  if (group_.barrier().arrive(waiter, BarrierSite::Exchange, why.empty())) return child;
  logWarning("a rank could not create ", what, " (here: ", why.empty() ? "created" : why.c_str(),
             ")");
  if (child != nullptr) abortWithin(nccl_, child, kAbortBound);
  return nullptr;
}

void* NcclCommunicator::allocateWindow(size_t bytes, Waiter& waiter) {
  if (!hasWindows()) throw InternalError("allocateWindow: this NCCL communicator has no windows");
  // Outcomes every rank agrees on (no split, some rank without memory, registration failing
  // everywhere) return null on every rank. Anything else ends the session: a rank that left the
  // sequence of window barriers, or holds a registration its peers lack, would leave them
  // waiting in NCCL or pair their barriers with its next ones.
  try {
    return makeWindow(bytes, waiter);
  } catch (const std::exception& e) {
    abortSession(group_.control(), AbortReason::Fatal, rank(),
                 str("rank ", rank(), ": a window of ", bytes, " bytes failed: ", e.what()));
    throw;
  }
}

void* NcclCommunicator::makeWindow(size_t bytes, Waiter& waiter) {
  if (windows_ == nullptr) {
    windows_ = splitBlockingChild("synk-windows", "the NCCL windows communicator", waiter);
    if (windows_ == nullptr) {
      windows_allowed_ = false;  // on every rank: the split agreed on its outcome
      logWarning("all-reduces run without symmetric windows");
      return nullptr;
    }
    // Its asynchronous errors polled as the others' are (a window call's all-reduce that fails
    // is then met at once, not at the step's deadline).
    attachToDevice();
    // Its first collective now, outside any graph capture, on memory in no window: a window
    // call's other all-reduces run here with NCCL's ordinary kernels (each new window gets its
    // own first below, for the symmetric ones).
    gather_scratch_.reserve(device_, sizeof(float));
    complete(windows_,
             nccl_.allReduce(gather_scratch_.data(), gather_scratch_.data(), 1, ncclFloat, ncclSum,
                             windows_, gpu_.stream()),
             "ncclAllReduce (the windows communicator's first)", waiter);
  }
  // Every rank allocates first and says whether it could: registration waits for every rank
  // inside NCCL, so it starts only where all of them will reach it.
  void* pointer = nullptr;
  const ncclResult_t allocated = nccl_.memAlloc(&pointer, bytes);
  const bool ok = allocated == ncclSuccess && pointer != nullptr;
  if (!group_.barrier().arrive(waiter, BarrierSite::Window, ok)) {
    if (ok) (void)nccl_.memFree(pointer);
    if (!ok) {
      logWarning("rank ", rank(), ": ncclMemAlloc of ", bytes,
                 " bytes for a window failed: ", describeNccl(nccl_, allocated, nullptr));
    }
    return nullptr;  // every rank alike; the caller uses ordinary memory
  }
  void* window = nullptr;
  const ncclResult_t registered =
      nccl_.commWindowRegister(windows_, pointer, bytes, &window, NCCL_WIN_COLL_SYMMETRIC);
  // Success with no window: NCCL has no symmetric memory here (it registers nothing).
  const bool got = registered == ncclSuccess && window != nullptr;
  // Bounded as the split is: a rank whose registration failed must not wait here for a step
  // deadline that may never come (its peers may still sit inside NCCL's registration).
  Waiter bounded(group_.control(), &group_, std::min(waiter.deadline(), Clock::now() + kSplitBound),
                 waiter.what());
  const bool all_registered = group_.barrier().arrive(bounded, BarrierSite::Window, got);
  if (!all_registered) {
    if (got) {
      // Registered here, not everywhere: the windows of the ranks no longer match.
      throw NcclError(str("rank ", rank(), ": another rank could not register a window"));
    }
    (void)nccl_.memFree(pointer);
    bool none = true;  // registration failed on every rank: windows go off, alike
    for (int r = 0; r < size(); ++r)
      none = none && !group_.barrier().okOf(r);
    if (!none) {
      if (registered == ncclSuccess) {
        throw NcclError(str("rank ", rank(), ": ncclCommWindowRegister gave no window here"));
      }
      fail(windows_, registered, "ncclCommWindowRegister");
    }
    windows_allowed_ = false;
    logWarning("no rank got a window from ncclCommWindowRegister (here: ",
               registered == ncclSuccess ? std::string("no symmetric memory")
                                         : describeNccl(nccl_, registered, windows_),
               "): all-reduces run without windows");
    return nullptr;
  }
  device_.adoptWindow(pointer);
  recordWindow(pointer, bytes);
  // One all-reduce in the new window now, outside any graph capture, so that whatever NCCL sets
  // up on a communicator's (or a window's) first collective is not first met inside a capture.
  // The window's contents are undefined until its user writes them.
  if (bytes >= sizeof(float)) {
    complete(windows_,
             nccl_.allReduce(pointer, pointer, 1, ncclFloat, ncclSum, windows_, gpu_.stream()),
             "ncclAllReduce (a new window's first)", waiter);
  }
  return pointer;
}

void NcclCommunicator::freeWindows() noexcept {
  device_.forgetWindows();  // their addresses may come back from a later allocation
  for (const Window& w : recordedWindows()) {
    const ncclResult_t freed = nccl_.memFree(w.begin);
    if (freed != ncclSuccess) {
      logWarning("ncclMemFree of a window failed: ", describeNccl(nccl_, freed, nullptr));
    }
  }
  forgetRecordedWindows();
}

NcclCommunicator::~NcclCommunicator() {
  gather_scratch_ = DeviceBuffer();  // stream-ordered; nothing after an abort
  if (comm_ == nullptr && fast_ == nullptr && windows_ == nullptr) return;
  gpu_.attachNccl(nullptr, nullptr, nullptr);
  // Unwinding after an error, or the session is going down: peers may never finalize.
  if (group_.aborted() || std::uncaught_exceptions() > 0) {
    abort();
  } else {
    close();
  }
}

bool NcclCommunicator::teardownBarrier(bool drained) noexcept {
  // Not the step's Waiter: close runs inside the Quit step, whose deadline may be far away.
  Waiter waiter(group_.control(), &group_, Clock::now() + kFinalizeBound, "closing NCCL");
  try {
    return group_.barrier().arrive(waiter, BarrierSite::Teardown, drained);
  } catch (const std::exception& e) {
    logWarning("the teardown barrier failed (", e.what(), ")");
    return false;
  }
}

void NcclCommunicator::close() noexcept {
  // This rank's stream drains first, so none of its collectives is still running; then every
  // rank waits for every other to have drained too: until a peer's last collective finished,
  // that peer may still read from this rank's buffers (NCCL's P2P/IPC mappings), so nobody
  // tears down before everybody is done.
  const bool drained = drainStream();
  if (!teardownBarrier(drained)) {
    if (!drained) {
      logWarning("the GPU stream did not drain before closing NCCL");
    }
    abort();
    return;
  }
  try {
    finalize();
  } catch (const std::exception& e) {
    logWarning("closing NCCL failed (", e.what(), "); aborting the communicator");
    abort();
  }
}

void NcclCommunicator::finalize() {
  // ncclCommFinalize flushes this rank's NCCL work and stops its proxy; it does not wait for
  // other ranks. Not a Waiter: at close the master may mark the session "closed"
  // (AbortReason::Shutdown) as soon as its own teardown is done, and peers that finished exit,
  // which a liveness probe would report as deaths. Only a real failure (a death, a timeout, a
  // fatal error elsewhere) or the bound stops the wait.
  const ControlBlock& control = group_.control();
  const auto deadline = Clock::now() + kFinalizeBound;
  const ncclResult_t started = nccl_.commFinalize(comm_);
  if (started != ncclSuccess && started != ncclInProgress) {
    throw NcclError(str("ncclCommFinalize: ", describeNccl(nccl_, started, comm_)));
  }
  while (true) {  // polled whatever it returned: the comm is non-blocking (see complete())
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = nccl_.commGetAsyncError(comm_, &state);
    if (queried != ncclSuccess) state = queried;
    if (state == ncclSuccess) break;
    if (state != ncclInProgress) {
      throw NcclError(str("ncclCommFinalize: ", describeNccl(nccl_, state, comm_)));
    }
    const uint32_t reason = control.abort.load(std::memory_order_acquire);
    if (reason != 0 && reason != static_cast<uint32_t>(AbortReason::Shutdown)) {
      throw PeerFailure(control.abort_rank, "the session was aborted during ncclCommFinalize");
    }
    if (Clock::now() >= deadline) {
      throw Timeout(str("ncclCommFinalize did not complete within ", kFinalizeBound.count(), " s"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // The blocking children are idle here now: aborting frees them without waiting for anyone.
  // An abort of the windows communicator left running may still be releasing their mappings:
  // the windows' memory is then left to the process exit.
  bool windows_released = true;
  for (ncclComm_t* child : {&fast_, &windows_}) {
    if (*child == nullptr) continue;
    const ncclComm_t idle = *child;
    *child = nullptr;
    const bool done = abortWithin(nccl_, idle, kAbortBound);
    if (child == &windows_) windows_released = done;
  }
  // State is ncclSuccess: does not block. Forgotten first: after a failed destroy the handle
  // may be freed, and abort() must not touch it.
  const ncclComm_t comm = comm_;
  comm_ = nullptr;
  const ncclResult_t destroyed = nccl_.commDestroy(comm);
  if (destroyed != ncclSuccess) {
    throw NcclError(str("ncclCommDestroy: ", describeNccl(nccl_, destroyed, nullptr)));
  }
  if (windows_released) freeWindows();  // no communicator is left that registered them
}

void NcclCommunicator::abort() noexcept {
  if ((comm_ == nullptr && fast_ == nullptr && windows_ == nullptr) || aborted_) return;
  aborted_ = true;
  gpu_.attachNccl(nullptr, nullptr, nullptr);
  const ncclComm_t fast = fast_;
  const ncclComm_t windows = windows_;
  const ncclComm_t comm = comm_;
  fast_ = nullptr;
  windows_ = nullptr;
  comm_ = nullptr;
  // One after the other, each bounded: a hung child abort still lets the parent's run. The
  // windows' memory stays (the stream may still hold work on it): the process exit frees it.
  if (windows != nullptr) abortWithin(nccl_, windows, kAbortBound);
  if (fast != nullptr) abortWithin(nccl_, fast, kAbortBound);
  if (comm != nullptr) abortWithin(nccl_, comm, kAbortBound);
  // The stream may hold work that never finishes (a collective whose peer is gone): nothing
  // after this may wait for it, the device's own teardown included.
  gpu_.markAborted();
}

void NcclCommunicator::abandon() noexcept {
  if ((comm_ == nullptr && fast_ == nullptr && windows_ == nullptr) || aborted_) return;
  gpu_.attachNccl(nullptr, nullptr, nullptr);
  if (!group_.aborted()) (void)teardownBarrier(false);
  comm_ = nullptr;
  fast_ = nullptr;
  windows_ = nullptr;
  aborted_ = true;
}

bool NcclCommunicator::drainStream() noexcept {
  const auto deadline = Clock::now() + kFinalizeBound;
  const ControlBlock& control = group_.control();
  while (Clock::now() < deadline) {
    switch (gpu_.queryStream()) {
      case NcclDevice::StreamState::Idle:
        return true;
      case NcclDevice::StreamState::Failed:
        return false;
      case NcclDevice::StreamState::Busy:
        break;
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
  if (rank() == master) {
    const ncclResult_t result = nccl_.getUniqueId(id);
    if (result == ncclSuccess) std::memcpy(barrier.outbox(sizeof(*id)), id, sizeof(*id));
    // Arrive either way, with the outcome as the ok flag: the peers fail at once instead of
    // waiting for the deadline.
    barrier.arrive(waiter, BarrierSite::Exchange, result == ncclSuccess);
    if (result != ncclSuccess) {
      throw NcclError(
          str("rank ", rank(), ": ncclGetUniqueId failed: ", describeNccl(nccl_, result, nullptr)));
    }
    return;
  }
  barrier.arrive(waiter, BarrierSite::Exchange, true);
  if (!barrier.okOf(master)) {
    throw NcclError(str("rank ", rank(), ": no NCCL communicator: the master rank ", master,
                        " could not create the NCCL unique id"));
  }
  std::memcpy(id, barrier.exchangeOf(master), sizeof(*id));
}

void NcclCommunicator::fail(ncclComm_t comm, ncclResult_t result, const char* what) const {
  throw NcclError(str("rank ", rank(), ": ", what, " failed: ", describeNccl(nccl_, result, comm)));
}

void NcclCommunicator::complete(ncclComm_t comm, ncclResult_t issued, const char* what,
                                Waiter& waiter) {
  if (issued != ncclSuccess && issued != ncclInProgress) fail(comm, issued, what);
  // The blocking child has done the call (the work is enqueued) when it returns ncclSuccess.
  // On the non-blocking communicator ncclSuccess does not mean that: ncclCommSplit returns it
  // while its job still runs (NCCL 2.28, see splitFastCommunicator). So every call there is
  // polled until the communicator's state leaves ncclInProgress — nothing may be issued on it
  // (or the stream) until then (NCCL user guide, "Nonblocking Group Operation") — which costs
  // one ncclCommGetAsyncError when the call had indeed finished.
  if (issued == ncclSuccess && comm != comm_) return;
  pollUntil(waiter, rank(), what, [&] {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = nccl_.commGetAsyncError(comm, &state);
    if (queried != ncclSuccess) state = queried;
    if (state == ncclInProgress) return false;
    if (state != ncclSuccess) fail(comm, state, what);
    return true;
  });
}

ncclRedOp_t NcclCommunicator::reductionFor(ReduceOp op, bool& scale_after) const {
  scale_after = false;
  if (op != ReduceOp::Avg) return ncclOpOf(op);
  // One rank: the average is the value itself. NCCL 2.28's one-rank ncclAvg kernel leaves the
  // tail of an out-of-place result unwritten (src/device/onerank.cu: block b covers
  // [b, b + 1) * alignUp(n / blocks, pack), which stops short of n; seen on an H100 as a
  // float64 reduce of 4099 elements whose last one was never written). ncclSum is a copy there.
  if (size() == 1) return ncclSum;
  if (premultiplyIsExact(size())) return ncclAvg;
  scale_after = true;
  return ncclSum;
}

// The entry points (core/communicator.h) checked the arguments: count > 0, op valid, root a rank.
void NcclCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  bool scale_after = false;
  const ncclRedOp_t op = reductionFor(args.op, scale_after);
  const void* send = args.send != nullptr ? args.send : args.buffer;
  // A call that agreed on windows (every rank alike): all its all-reduces on the windows
  // communicator, where NCCL takes its symmetric kernels for those in a window (agreed by the
  // caller on every rank) and its ordinary ones for the rest (in no window on any rank);
  // everything else on comm(), where nothing is registered.
  const bool windowed = args.window_call;
  if (windowed && send != args.buffer) {
    throw InternalError("an all-reduce of a call with windows must run in place");
  }
  const ncclComm_t on = windowed && windows_ != nullptr ? windows_ : comm();
  complete(
      on,
      nccl_.allReduce(send, args.buffer, args.count, ncclTypeOf(args.dtype), op, on, gpu_.stream()),
      "ncclAllReduce", waiter);
  if (scale_after) device_.scale(args.buffer, args.count, args.dtype, 1.0 / size());
}

void NcclCommunicator::doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) {
  cudaStream_t stream = gpu_.stream();
  bool any_scaled = false;
  {
    NcclGroup group(nccl_);
    for (const AllReduceArgs& args : list) {
      bool scale_after = false;
      const ncclRedOp_t op = reductionFor(args.op, scale_after);
      any_scaled = any_scaled || scale_after;
      queued(nccl_,
             nccl_.allReduce(args.buffer, args.buffer, args.count, ncclTypeOf(args.dtype), op,
                             comm(), stream),
             "ncclAllReduce (list)", rank(), comm());
    }
    complete(comm(), group.end(), "ncclGroupEnd (all_reduce list)", waiter);
  }
  if (!any_scaled) return;
  for (const AllReduceArgs& args : list) {
    bool scale_after = false;
    reductionFor(args.op, scale_after);
    if (scale_after) device_.scale(args.buffer, args.count, args.dtype, 1.0 / size());
  }
}

void NcclCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  if (rank() == args.root && args.recv == nullptr) {
    throw InvalidArgument("nccl reduce: no receive buffer at the root");
  }
  // Off the root NCCL never touches recvbuff; hand it a valid pointer all the same.
  void* recv = args.recv != nullptr ? args.recv : const_cast<void*>(args.send);
  bool scale_after = false;
  const ncclRedOp_t op = reductionFor(args.op, scale_after);
  complete(comm(),
           nccl_.reduce(args.send, recv, args.count, ncclTypeOf(args.dtype), op, args.root, comm(),
                        gpu_.stream()),
           "ncclReduce", waiter);
  if (scale_after && rank() == args.root) {
    device_.scale(recv, args.count, args.dtype, 1.0 / size());
  }
}

void NcclCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  complete(comm(),
           nccl_.broadcast(args.send != nullptr ? args.send : args.buffer, args.buffer, args.count,
                           ncclTypeOf(args.dtype), args.root, comm(), gpu_.stream()),
           "ncclBroadcast", waiter);
}

// As an all-gather on the blocking communicator, into the root's result and a scratch buffer
// elsewhere: the root receives what a gather would (its ingress bounds both), the others get a
// copy they drop. Point-to-point (ncclSend/ncclRecv) would need the non-blocking communicator,
// whose calls cost ~55 us each (its peer connections are made on first use, inside the call,
// where on a blocking one no deadline would reach).
void NcclCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                                Waiter& waiter) {
  const bool root = rank() == args.root;
  if (root && args.recv == nullptr) {
    throw InvalidArgument("nccl gather: no receive buffer at the root");
  }
  void* recv = args.recv;
  if (!root) {
    // A grow frees stream-ordered: the last gather has written the old block.
    gather_scratch_.reserve(device_, offsets.back() * dtypeSize(args.dtype));
    recv = gather_scratch_.data();
  }
  AllGatherArgs all;
  all.send = args.send;
  all.recv = recv;
  all.counts = args.counts;
  all.dtype = args.dtype;
  doAllGather(all, offsets, waiter);
}

void NcclCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                                   Waiter& waiter) {
  if (args.recv == nullptr) throw InvalidArgument("nccl all_gather: no receive buffer");
  const ncclDataType_t type = ncclTypeOf(args.dtype);
  cudaStream_t stream = gpu_.stream();
  const bool equal = std::all_of(args.counts.begin(), args.counts.end(),
                                 [&](size_t count) { return count == args.counts[0]; });
  if (equal) {
    complete(comm(), nccl_.allGather(args.send, args.recv, args.counts[0], type, comm(), stream),
             "ncclAllGather", waiter);
    return;
  }
  // Unequal parts: every rank broadcasts its part straight into its offset of every recv.
  const size_t element = dtypeSize(args.dtype);
  char* recv = static_cast<char*>(args.recv);
  NcclGroup group(nccl_);
  for (int r = 0; r < size(); ++r) {
    if (args.counts[r] == 0) continue;
    char* part = recv + offsets[r] * element;
    const void* source = r == rank() ? args.send : part;  // sendbuff is read at the root only
    queued(nccl_, nccl_.broadcast(source, part, args.counts[r], type, r, comm(), stream),
           "ncclBroadcast (all_gather)", rank(), comm());
  }
  complete(comm(), group.end(), "ncclGroupEnd (all_gather)", waiter);
}

}  // namespace synk
