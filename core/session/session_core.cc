#include "synk/core/session/session_core.h"

#include <sched.h>

#include <exception>
#include <thread>

#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/phase_clock.h"

namespace synk::detail {
namespace {

// The session open in this process: fork() refuses a second one, exit closes it.
SessionCore* g_open_session = nullptr;
// A session whose failure was reported and whose teardown is still to finish (finishTeardown).
SessionCore* g_pending_teardown = nullptr;

}  // namespace

SessionCore* openSession() {
  return g_open_session;
}

void finishPendingTeardown() noexcept {
  if (g_pending_teardown != nullptr) g_pending_teardown->finishTeardown();
}

// CPUs for the ranks of a session on host memory (a backend that binds no devices): the r-th CPU
// this process may run on, when there are enough for every rank to have its own.
std::vector<int> rankCpus(const ForkOptions& options, const BackendFactory& factory) {
  if (!options.bind_cpus || factory.bindsDevices()) return {};
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < options.n_parallel;
       ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (static_cast<int>(cpus.size()) < options.n_parallel) return {};
  return cpus;
}

SessionCore::SessionCore(const ForkOptions& options, BackendRegistry registry,
                         std::shared_ptr<ModelLoader> loader, BackendFactory& factory)
    : options_(options),
      registry_(std::move(registry)),
      loader_(std::move(loader)),
      factory_(&factory),
      steps_(data_, uniform_shapes_, models_.shapeGeneration(),
             [this](const std::string& reason) { abortAndClose(reason); }),
      distribute_handler_(rank_, models_, *loader_, call_collectives_) {
  steps_.handle(Opcode::Barrier, barrier_handler_);
  steps_.handle(Opcode::Synchronize, synchronize_handler_);
  steps_.handle(Opcode::Distribute, distribute_handler_);
  steps_.handle(Opcode::Call, call_handler_);
  steps_.handle(Opcode::Collective, collective_handler_);
}

SessionCore::~SessionCore() {
  if (group_ && group_->isMaster()) close();  // in a copy made by fork(), close() only lets go
}

void SessionCore::start() {
  ProcessGroupOptions pg;
  pg.n_ranks = options_.n_parallel;
  pg.master_rank = options_.master_rank;
  pg.timeout = options_.timeout;
  pg.startup_timeout = options_.startup_timeout;
  pg.spin = options_.spin;
  // More ranks than hardware threads: a spinning rank would hold the core its peer needs.
  pg.cpus = rankCpus(options_, *factory_);
  pg.yield_while_spinning =
      options_.n_parallel > static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  owned_group_ = ProcessGroup::create(pg, [this](ProcessGroup& g) { return workerMain(g); });
  group_ = owned_group_.get();
  steps_.attach(*group_);
  owner_pid_ = thisProcessId();
  g_open_session = this;
  try {
    startBackend();
  } catch (const std::exception& e) {
    abortAndClose(e.what());
    throw;
  }
}

void SessionCore::startBackend() {
  const int rank = group_->rank();
  heap_ = std::make_unique<ShmHeap>(group_->shmPrefix(), rank);
  const int ordinal = options_.devices.empty() ? -1 : options_.devices[rank];
  RankEnvironment env{*group_, *heap_, ordinal, options_.devices};
  backend_ = factory_->create(env);
  data_.open(group_->shmPrefix(), &backend_->device());
  rank_ = RankResources{rank,
                        size(),
                        masterRank(),
                        group_,
                        &backend_->device(),
                        heap_.get(),
                        &data_.blobs(),
                        backend_.get(),
                        &backend_->communicator(backend_->nativeUnavailable() == nullptr)};
  Waiter waiter = group_->startupWaiter("startup");
  group_->barrier().arrive(waiter, BarrierSite::Startup);
}

int SessionCore::workerMain(ProcessGroup& group) {
  // This process is a copy of the master at fork time: drop what belongs to the master.
  group_ = &group;
  steps_.attach(group);
  try {
    startBackend();
    steps_.serve();
    releaseResources();
    return kExitOk;
  } catch (...) {
    // Fatal here, or the session aborted: release the communicators fast, then exit.
    if (backend_) backend_->abort();
    throw;
  }
}

void SessionCore::ensureOpen() {
  if (!closed_ && owner_pid_ != thisProcessId()) throwCopy();
  if (!closed_ && group_ && group_->isMaster() && group_->aborted()) {
    // A failure seen outside a step (a wait while loading or reading a variable), or one no
    // step has reported yet (a worker died while the master was idle): finish the abort now.
    // Unless a call already reported it, this one reports it as what it was (PeerFailure,
    // Timeout); later calls say "aborted".
    if (!abort_reason_.empty()) {
      abortAndClose(abort_reason_);
      throwClosed();
    }
    std::exception_ptr failure;
    try {
      throwAborted(group_->control());
    } catch (...) {
      failure = std::current_exception();
    }
    abortAndClose(abortMessage(group_->control()));
    std::rethrow_exception(failure);
  }
  if (!closed_) return;
  if (ownedHere()) finishTeardown();
  throwClosed();
}

void SessionCore::throwCopy() const {
  throw UsageError(str("this process (pid ", thisProcessId(),
                       ") is a copy of the session's master (pid ", owner_pid_,
                       ") made by fork(): only the master may use or close the session; ",
                       "the copy's handles do nothing when dropped"));
}

void SessionCore::throwClosed() const {
  if (!abort_reason_.empty()) {
    throw UsageError(str("the session was aborted and is closed: ", abort_reason_));
  }
  throw UsageError("the session is closed");
}

StepResult SessionCore::runStep(Opcode opcode, const ByteWriter& payload, const std::string& what,
                                bool post) {
  ensureOpen();
  return steps_.run(opcode, payload, what, post);
}

void SessionCore::synchronizeOutsideStep(const std::string& what) {
  Waiter waiter = group_->commandWaiter(what);
  try {
    backend_->device().synchronize(waiter);
  } catch (const std::exception& e) {
    // A peer died, the deadline passed, or the device failed. Record the abort and stop the
    // device, but leave the teardown (abortAndClose) to the next call or close(): the caller
    // still holds device memory and plugin instances that must not outlive the backend.
    if (!group_->aborted()) {
      abortSession(group_->control(), AbortReason::Fatal, group_->rank(), e.what());
    }
    if (backend_) backend_->abort();
    abort_reason_ = e.what();  // reported now, by this throw
    throw;
  }
}

bool SessionCore::resolveNative(std::optional<bool> requested) {
  ensureOpen();
  const char* unavailable = backend_->nativeUnavailable();
  if (!requested.has_value()) return unavailable == nullptr;
  if (*requested && unavailable != nullptr) throw UsageError(unavailable);
  return *requested;
}

void SessionCore::barrierStep() {
  runStep(Opcode::Barrier, ByteWriter(), "barrier");
}

void SessionCore::synchronizeStep() {
  runStep(Opcode::Synchronize, ByteWriter(), "synchronize");
}

std::vector<RankStepTimes> SessionCore::lastStepTimes() {
  ensureOpen();
  if (!options_.step_times) {
    throw UsageError("lastStepTimes: the session was forked without ForkOptions::step_times");
  }
  // A rank publishes within microseconds of the step's end; a second is a generous bound.
  const std::vector<StepTimes> times = steps_.lastStepTimes(std::chrono::seconds(1));
  std::vector<RankStepTimes> out;
  for (size_t r = 0; r < times.size(); ++r) {
    const auto& ns = times[r].ns;
    auto at = [&](Phase p) { return ns[static_cast<size_t>(p)]; };
    RankStepTimes t;
    t.rank = static_cast<int>(r);
    t.start_ns = at(Phase::StepStart);
    t.inputs_ns = at(Phase::Inputs);
    t.plugin_ns = at(Phase::Plugin);
    t.device_ns = times[r].device_ns;
    t.output_copy_ns = at(Phase::OutputCopy);
    t.agree_ns = at(Phase::Agree);
    t.finish_ns = at(Phase::Finish);
    t.device_wait_ns = at(Phase::DeviceWait);
    t.collective_ns = at(Phase::Collective);
    t.end_ns = at(Phase::StepEnd);
    t.step_ns = at(Phase::Handler);
    out.push_back(t);
  }
  return out;
}

void SessionCore::abortAndClose(const std::string& reason) noexcept {
  abort_reason_ = reason;
  if (group_ && !group_->aborted()) {
    abortSession(group_->control(), AbortReason::Fatal, group_->rank(), reason);
  }
  teardown_pending_ = true;
  // The backend's abort runs while the failure is reported: every surviving rank aborts its NCCL
  // communicators at the same time (NVIDIA/nccl #863), the master's included, but its ~0.5 s per
  // communicator no longer delays the report past the deadline.
  if (backend_) {
    try {
      backend_abort_ = std::thread([backend = backend_.get()] { backend->abort(); });
    } catch (...) {
      backend_->abort();  // no thread to be had: abort here
    }
  }
  if (owned_group_) owned_group_->endLateRanks();
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
  g_pending_teardown = this;
}

void SessionCore::finishTeardown() noexcept {
  if (!teardown_pending_) return;
  teardown_pending_ = false;
  if (g_pending_teardown == this) g_pending_teardown = nullptr;
  // What each part took, at debug level (the failure was reported before any of it).
  const auto t0 = Clock::now();
  if (backend_abort_.joinable()) backend_abort_.join();  // bounded: the backend's own limits
  const auto t1 = Clock::now();
  releaseResources();
  const auto t2 = Clock::now();
  if (owned_group_) owned_group_->shutdown(std::chrono::milliseconds(3000));
  const auto t3 = Clock::now();
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  logDebug("teardown after the failure: backend abort joined in ", ms(t1 - t0), " ms, resources ",
           ms(t2 - t1), " ms, ranks reaped ", ms(t3 - t2), " ms");
}

void SessionCore::releaseResources() noexcept {
  reportPhases();
  // Device memory goes back to the device before the device itself goes away.
  collective_handler_.release();
  models_.clear();
  data_.close();
  rank_ = RankResources{};
  backend_.reset();
  heap_.reset();
}

void SessionCore::abandonCopy() noexcept {
  if (g_open_session == this) g_open_session = nullptr;
  if (g_pending_teardown == this) g_pending_teardown = nullptr;
  // A thread of the master's does not exist in this copy: forget its handle.
  if (backend_abort_.joinable()) backend_abort_.detach();
  teardown_pending_ = false;
  if (abandoned_) return;
  abandoned_ = true;
  // Freeing these would call into the device (a CUDA context does not survive fork) or plugin
  // code on the master's behalf: the copy leaks them, its memory is its own to lose.
  collective_handler_.abandon();
  models_.abandon();
  data_.abandon();
  (void)backend_.release();
  (void)heap_.release();
}

void SessionCore::close() {
  if (!group_ || !group_->isMaster()) return;
  if (closed_) {
    if (ownedHere()) {
      finishTeardown();
    } else if (teardown_pending_) {
      abandonCopy();  // the master's resources, and its abort thread, are not this copy's
    }
    return;
  }
  if (!ownedHere()) {
    // A child forked by the master (a checkpoint writer) that exits or drops its handles: the
    // ranks, the segments and the device are the master's, which goes on using them.
    abandonCopy();
    return;
  }
  try {
    steps_.quit();
  } catch (const std::exception&) {
    // A worker already gone: shutdown() below reaps and kills what is left.
  }
  releaseResources();
  owned_group_->shutdown(std::chrono::milliseconds(5000));
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
}

}  // namespace synk::detail
