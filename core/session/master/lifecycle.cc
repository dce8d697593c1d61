// SessionLifecycle (lifecycle.h): fork, backends, open/closed state, runStep, teardown.
#include "synk/core/session/master/lifecycle.h"

#include <sched.h>

#include <exception>
#include <thread>

#include "synk/core/error.h"
#include "synk/core/log.h"

namespace synk::detail {
namespace {

// The session open in this process: fork() refuses a second one, exit closes it.
SessionLifecycle* g_open_session = nullptr;
// A session whose failure was reported and whose teardown is still to finish (finishTeardown).
SessionLifecycle* g_pending_teardown = nullptr;

}  // namespace

SessionLifecycle* openSession() {
  return g_open_session;
}

void finishPendingTeardown() noexcept {
  if (g_pending_teardown != nullptr) g_pending_teardown->finishTeardown();
}

// CPUs for the ranks of a session on host memory (a backend that binds no devices): the r-th CPU
// this process may run on, when there are enough for every rank to have its own.
// `local_ranks`: the ranks on this node.
std::vector<int> rankCpus(const ForkOptions& options, const BackendFactory& factory,
                          int local_ranks) {
  if (!options.bind_cpus || factory.bindsDevices()) return {};
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < local_ranks; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (static_cast<int>(cpus.size()) < local_ranks) return {};
  return cpus;
}

SessionLifecycle::SessionLifecycle(const ForkOptions& options, BackendRegistry registry,
                                   BackendFactory& factory, Parts parts)
    : options_(options),
      registry_(std::move(registry)),
      factory_(&factory),
      steps_(parts.steps),
      rank_backend_({parts.rank, parts.data, parts.models, parts.collective_handler}) {}

SessionLifecycle::~SessionLifecycle() {
  close();  // only the master closes; in a copy made by fork(), close() only lets go
}

void SessionLifecycle::start(const NodeSpan& span) {
  ProcessGroupOptions pg;
  pg.n_ranks = options_.n_parallel;
  pg.master_rank = options_.master_rank;
  pg.timeout = options_.timeout;
  pg.startup_timeout = options_.startup_timeout;
  pg.spin = options_.spin;
  pg.span = span;
  const int local_ranks = span.several() ? span.ranks_per_node : options_.n_parallel;
  // More ranks than hardware threads: a spinning rank would hold the core its peer needs (on
  // several nodes the bridge, a thread of the node's owner, polls beside them).
  pg.cpus = rankCpus(options_, *factory_, local_ranks);
  const int pollers = (local_ranks + (span.several() ? 1 : 0)) * std::max(1, span.nodes_on_host);
  pg.yield_while_spinning =
      pollers > static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  owned_group_ = ProcessGroup::create(pg, [this](ProcessGroup& g) { return workerMain(g); });
  group_ = owned_group_.get();
  steps_.attach(*group_);
  owner_pid_ = thisProcessId();
  g_open_session = this;
  try {
    rank_backend_.start(options_, *factory_, *group_);
  } catch (const std::exception& e) {
    abortAndClose(e.what());
    throw;
  }
}

int SessionLifecycle::workerMain(ProcessGroup& group) {
  // This process is a copy of the master at fork time: drop what belongs to the master.
  group_ = &group;
  steps_.attach(group);
  try {
    rank_backend_.start(options_, *factory_, *group_);
    steps_.serve();
    rank_backend_.release();
    return kExitOk;
  } catch (...) {
    // Fatal here, or the session aborted: release the communicators fast, then exit.
    if (Backend* backend = rank_backend_.get()) backend->abort();
    throw;
  }
}

void SessionLifecycle::ensureOpen() {
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

void SessionLifecycle::throwCopy() const {
  throw UsageError(str("this process (pid ", thisProcessId(),
                       ") is a copy of the session's master (pid ", owner_pid_,
                       ") made by fork(): only the master may use or close the session; ",
                       "the copy's handles do nothing when dropped"));
}

void SessionLifecycle::throwClosed() const {
  if (!abort_reason_.empty()) {
    throw UsageError(str("the session was aborted and is closed: ", abort_reason_));
  }
  throw UsageError("the session is closed");
}

StepResult SessionLifecycle::runStep(Opcode opcode, const ByteWriter& payload,
                                     const std::string& what, bool post) {
  ensureOpen();
  return steps_.run(opcode, payload, what, post);
}

void SessionLifecycle::synchronizeOutsideStep(const std::string& what) {
  Waiter waiter = group_->commandWaiter(what);
  try {
    rank_backend_.get()->device().synchronize(waiter);
  } catch (const std::exception& e) {
    // A peer died, the deadline passed, or the device failed. Record the abort and stop the
    // device, but leave the teardown (abortAndClose) to the next call or close(): the caller
    // still holds device memory and plugin instances that must not outlive the backend.
    if (!group_->aborted()) {
      abortSession(group_->control(), AbortReason::Fatal, group_->rank(), e.what());
    }
    if (Backend* backend = rank_backend_.get()) backend->abort();
    abort_reason_ = e.what();  // reported now, by this throw
    throw;
  }
}

void SessionLifecycle::abortAndClose(const std::string& reason) noexcept {
  abort_reason_ = reason;
  if (group_ && !group_->aborted()) {
    abortSession(group_->control(), AbortReason::Fatal, group_->rank(), reason);
  }
  teardown_pending_ = true;
  // The backend's abort runs while the failure is reported: every surviving rank aborts its NCCL
  // communicators at the same time (NVIDIA/nccl #863), the master's included, but its ~0.5 s per
  // communicator no longer delays the report past the deadline.
  rank_backend_.startAbort();
  if (owned_group_) owned_group_->endLateRanks();
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
  g_pending_teardown = this;
}

void SessionLifecycle::finishTeardown() noexcept {
  if (!teardown_pending_) return;
  teardown_pending_ = false;
  if (g_pending_teardown == this) g_pending_teardown = nullptr;
  // What each part took, at debug level (the failure was reported before any of it).
  const auto t0 = Clock::now();
  rank_backend_.joinAbort();  // bounded: the backend's own limits
  const auto t1 = Clock::now();
  rank_backend_.release();
  const auto t2 = Clock::now();
  if (owned_group_) owned_group_->shutdown(std::chrono::milliseconds(3000));
  const auto t3 = Clock::now();
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  logDebug("teardown after the failure: backend abort joined in ", ms(t1 - t0), " ms, resources ",
           ms(t2 - t1), " ms, ranks reaped ", ms(t3 - t2), " ms");
}

void SessionLifecycle::abandonCopy() noexcept {
  if (g_open_session == this) g_open_session = nullptr;
  if (g_pending_teardown == this) g_pending_teardown = nullptr;
  teardown_pending_ = false;
  rank_backend_.abandon();
}

void SessionLifecycle::close() {
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
  } catch (const std::exception& e) {
    // A worker already gone: shutdown() below reaps and kills what is left. Otherwise the ranks
    // still wait for a command (on other nodes, where this node's Shutdown does not travel): an
    // abort tells them.
    if (!group_->aborted()) {
      abortSession(group_->control(), AbortReason::Fatal, group_->rank(),
                   str("the session could not tell its ranks to quit: ", e.what()));
    }
  }
  rank_backend_.release();
  owned_group_->shutdown(std::chrono::milliseconds(5000));
  closed_ = true;
  if (g_open_session == this) g_open_session = nullptr;
}

}  // namespace synk::detail
