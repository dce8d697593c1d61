#include "synk/core/process_group.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "synk/core/error.h"
#include "synk/core/log.h"

namespace synk {
namespace {

std::string signalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return str("signal ", sig, " (", abbrev ? str("SIG", abbrev) : std::string("?"),
             text ? str(": ", text) : std::string(), ")");
}

// Pins this process to the rank's CPU, so two spinning ranks never share a core. Best effort:
// the binding is a performance hint, never a reason to fail.
void bindToCpu(const std::vector<int>& cpus, int rank) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[static_cast<size_t>(rank)], &set);
  sched_setaffinity(0, sizeof set, &set);
}

}  // namespace

ProcessGroup::ProcessGroup(const ProcessGroupOptions& options, SharedMapping mapping, int own_rank)
    : options_(options),
      mapping_(std::move(mapping)),
      cb_(new (mapping_.data()) ControlBlock),
      rank_(own_rank),
      barrier_(*cb_, own_rank, options.n_ranks, options.spin, options.yield_while_spinning),
      pids_(options.n_ranks, 0),
      reaped_(options.n_ranks, false) {}

std::unique_ptr<ProcessGroup> ProcessGroup::create(const ProcessGroupOptions& options,
                                                   const WorkerMain& worker_main) {
  if (options.n_ranks < 1 || options.n_ranks > kMaxRanks) {
    throw InvalidArgument(
        str("fork: n_parallel must be in [1, ", kMaxRanks, "], got ", options.n_ranks));
  }
  if (options.master_rank < 0 || options.master_rank >= options.n_ranks) {
    throw InvalidArgument(
        str("fork: master_rank ", options.master_rank, " is not a rank of ", options.n_ranks));
  }
  if (options.timeout.count() <= 0) throw InvalidArgument("fork: timeout must be positive");
  if (options.startup_timeout.count() <= 0) {
    throw InvalidArgument("fork: startup_timeout must be positive");
  }
  const NodeSpan& span = options.span;
  if (span.several()) {
    if (span.ranks_per_node < 1 || span.node < 0 || span.node >= span.nodes ||
        options.n_ranks != span.nodes * span.ranks_per_node || !span.start_link) {
      throw InvalidArgument(str("fork: a span of ", span.nodes, " nodes with ", span.ranks_per_node,
                                " ranks each (this is node ", span.node, ") for ", options.n_ranks,
                                " ranks", span.start_link ? "" : ", without a link between them"));
    }
    if (options.master_rank >= span.ranks_per_node) {
      throw InvalidArgument(str("fork: master_rank ", options.master_rank,
                                " is not on node 0, which holds ranks 0-", span.ranks_per_node - 1,
                                " (the master is the launcher of node 0)"));
    }
  }
  SharedMapping mapping(ControlBlock::bytesFor(options.n_ranks));
  // This process's own rank: the master on the master's node, else its node's first.
  const int own = span.node == 0 ? options.master_rank : span.firstRank();
  std::unique_ptr<ProcessGroup> group(new ProcessGroup(options, std::move(mapping), own));
  ControlBlock& cb = *group->cb_;
  cb.n_ranks = options.n_ranks;
  cb.ranks_per_node = options.span.several() ? options.span.ranks_per_node : 0;
  cb.master_rank = options.master_rank;
  cb.master_pid = getpid();  // the node's parent of every worker (the master on one node)
  for (int r = 0; r < options.n_ranks; ++r)
    new (&cb.slot(r)) RankSlot{};
  group->owner_ = true;
  group->shm_prefix_ = sessionShmPrefix(cb.master_pid, randomToken());
  group->pids_[own] = cb.master_pid;
  setLogRank(own == options.master_rank ? kLogMaster : own);
  cb.slot(own).pid = cb.master_pid;

  // Buffered output would otherwise be written once by every process that inherits it.
  std::fflush(nullptr);
  // Before the workers, which then close their copy of its pipe: only the master holds it.
  group->watcher_ = ShmWatcher::start(group->shm_prefix_);
  for (int r = group->firstLocal(); r < group->endLocal(); ++r) {
    if (r == own) continue;
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      abortSession(cb, AbortReason::Fatal, options.master_rank, "fork failed");
      group->shutdown(std::chrono::milliseconds(2000));
      throw SystemError(str("fork of worker rank ", r), err);
    }
    if (pid == 0) group->runWorker(r, worker_main);
    group->pids_[r] = pid;
  }
  if (span.several()) {
    // After the fork (MPI must not be initialised in a process that forks its ranks afterwards)
    // and before any barrier.
    try {
      group->link_ = span.start_link(cb);
    } catch (const std::exception& e) {
      abortSession(cb, AbortReason::Fatal, own, str("the link to the other nodes: ", e.what()));
      group->shutdown(std::chrono::milliseconds(2000));
      throw;
    }
  }
  bindToCpu(options.cpus, own - group->firstLocal());
  if (own != options.master_rank) group->runNodeLeader(worker_main);
  return group;
}

int ProcessGroup::runRank(const WorkerMain& worker_main) {
  try {
    return worker_main(*this);
  } catch (const std::exception& e) {
    if (aborted()) return kExitAborted;  // the session's failure, reported by whoever caused it
    storeMessage(cb_->slot(rank_).message, e.what());
    abortSession(*cb_, AbortReason::Fatal, rank_, str("rank ", rank_, " failed: ", e.what()));
  } catch (...) {
    abortSession(*cb_, AbortReason::Fatal, rank_,
                 str("rank ", rank_, " failed: unknown exception"));
  }
  return kExitFatal;
}

void ProcessGroup::runNodeLeader(const WorkerMain& worker_main) {
  const int code = runRank(worker_main);
  // The node's owner: its ranks, its shared memory and the link (whose end waits for the
  // master's: this process ends with the session, as a worker does).
  shutdown(std::chrono::milliseconds(5000));
  std::fflush(nullptr);
  _exit(code);  // never run the user's atexit handlers or static destructors
}

void ProcessGroup::runWorker(int rank, const WorkerMain& worker_main) {
  // Die with the master: a worker must never outlive it holding a GPU or shared memory.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != cb_->master_pid) _exit(kExitAborted);
  watcher_.forget();
  owner_ = false;
  rank_ = rank;
  setLogRank(rank);
  bindToCpu(options_.cpus, rank - firstLocal());
  barrier_ = Barrier(*cb_, rank, options_.n_ranks, options_.spin, options_.yield_while_spinning);
  pids_.assign(pids_.size(), 0);
  cb_->slot(rank).pid = getpid();
  const int code = runRank(worker_main);
  std::fflush(nullptr);
  _exit(code);  // never run the master's atexit handlers or static destructors
}

ProcessGroup::~ProcessGroup() {
  if (owner_) shutdown(std::chrono::milliseconds(2000));
  // A copy of the owner made by fork() (no exec) holds the link object but not its thread.
  if (link_ && getpid() != cb_->master_pid) (void)link_.release();
}

pid_t ProcessGroup::pidOf(int rank) const {
  return cb_->slot(rank).pid.load();
}

namespace {

// now + timeout, saturated: a timeout of years would overflow the clock.
Clock::time_point deadlineAfter(std::chrono::milliseconds timeout) {
  const auto now = Clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Waiter::never() - now);
  return timeout >= room ? Waiter::never() : now + timeout;
}

}  // namespace

Waiter ProcessGroup::commandWaiter(std::string what) {
  return Waiter(*cb_, this, deadlineAfter(options_.timeout), std::move(what));
}

Clock::time_point ProcessGroup::commandDeadline() const {
  return deadlineAfter(options_.timeout);
}

Waiter ProcessGroup::startupWaiter(std::string what) {
  return Waiter(*cb_, this, deadlineAfter(options_.startup_timeout), std::move(what));
}

Waiter ProcessGroup::idleWaiter() {
  return Waiter(*cb_, this, Waiter::never(), "waiting for the next command");
}

bool ProcessGroup::aborted() const {
  return cb_->abort.load(std::memory_order_acquire) != 0;
}

std::string ProcessGroup::describeExit(int rank, int wait_status) const {
  std::string how;
  if (wait_status == kStatusUnknown) {
    how = "exited; its exit status was collected elsewhere (is SIGCHLD ignored?)";
  } else if (WIFSIGNALED(wait_status)) {
    how = str("was killed by ", signalName(WTERMSIG(wait_status)));
  } else if (WIFEXITED(wait_status)) {
    how = str("exited with code ", WEXITSTATUS(wait_status));
    const char* message = cb_->slot(rank).message;
    if (WEXITSTATUS(wait_status) == kExitFatal && message[0]) how += str(": ", message);
  } else {
    how = str("stopped (wait status ", wait_status, ")");
  }
  return str("rank ", rank, " (pid ", pids_[rank], ") ", how);
}

void ProcessGroup::check() {
  if (!owner_) {
    if (getppid() != cb_->master_pid) {
      abortSession(*cb_, AbortReason::PeerDied, options_.master_rank, "the master process died");
      throwAborted(*cb_);
    }
    return;
  }
  for (int r = 0; r < size(); ++r) {
    int status = 0;
    if (reap(r, &status)) {
      const bool clean_quit = WIFEXITED(status) && WEXITSTATUS(status) == kExitOk;
      if (!clean_quit || !aborted()) {
        abortSession(*cb_, AbortReason::PeerDied, r, describeExit(r, status));
      }
    }
  }
  if (aborted()) throwAborted(*cb_);
}

bool ProcessGroup::reap(int r, int* status) {
  if (!outstanding(r)) return false;
  const pid_t got = waitpid(pids_[r], status, WNOHANG);
  if (got == pids_[r]) {
    reaped_[r] = true;
    return true;
  }
  if (got < 0 && errno == ECHILD) {  // reaped by someone else (SIGCHLD ignored): gone all the same
    reaped_[r] = true;
    *status = kStatusUnknown;
    return true;
  }
  return false;
}

void ProcessGroup::reapExited() {
  for (int r = 0; r < size(); ++r) {
    int status = 0;
    reap(r, &status);
  }
}

void ProcessGroup::endLateRanks() {
  if (!owner_ || shut_down_ || getpid() != cb_->master_pid) return;
  for (int r = 0; r < size(); ++r) {
    if (outstanding(r) && cb_->slot(r).late.load(std::memory_order_acquire)) {
      kill(pids_[r], SIGKILL);
    }
  }
  removeSegmentsWithPrefix(shm_prefix_);
}

void ProcessGroup::shutdown(std::chrono::milliseconds grace) {
  // A copy of the master made by fork() (no exec) holds this object too: the workers and the
  // segments are not its to end.
  if (!owner_ || shut_down_ || getpid() != cb_->master_pid) return;
  shut_down_ = true;
  // First, so that the barrier in flight is carried through but the Shutdown below does not
  // travel: every node ends its session itself, after the last command (Quit).
  if (link_) link_->stop();
  if (!aborted()) abortSession(*cb_, AbortReason::Shutdown, rank_, "session closed");
  // A rank that missed a deadline will not leave by itself: end it now, so the failure is
  // reported at the deadline rather than a grace period later.
  for (int r = 0; r < size(); ++r) {
    if (outstanding(r) && cb_->slot(r).late.load(std::memory_order_acquire)) {
      kill(pids_[r], SIGKILL);
    }
  }
  const auto deadline = Clock::now() + grace;
  auto pending = [&] {
    for (int r = 0; r < size(); ++r) {
      if (outstanding(r)) return true;
    }
    return false;
  };
  reapExited();
  while (pending() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    reapExited();
  }
  for (int r = 0; r < size(); ++r) {
    if (outstanding(r)) kill(pids_[r], SIGKILL);
  }
  // A process stuck in the kernel (a GPU driver call) dies only when that call returns: wait a
  // bounded time, then leave it to be reaped when this process exits.
  const auto kill_deadline = Clock::now() + kKillWait;
  reapExited();
  while (pending() && Clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    reapExited();
  }
  for (int r = 0; r < size(); ++r) {
    if (!outstanding(r)) continue;
    logWarning("rank ", r, " (pid ", pids_[r], ") did not exit ", kKillWait.count(),
               " s after SIGKILL; leaving it");
  }
  removeSegmentsWithPrefix(shm_prefix_);
  watcher_.release();
  link_.reset();  // last: its end (MPI's) waits for every node's
}

}  // namespace synk
