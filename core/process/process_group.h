#pragma once
// The processes of a session: the master (the user's process, rank `master_rank`) and one
// forked worker per other rank, sharing one control block.
//
// Failure contract: the master notices a dead worker within milliseconds of its next wait (it
// reaps its children while waiting), a worker notices a dead master at once (PR_SET_PDEATHSIG)
// or at its next wait. Either marks the session aborted in the control block, every waiting
// process wakes up and leaves, and the master's shutdown() kills what is left and removes every
// shared-memory segment whose name carries the session's prefix. A master that dies without
// shutdown() leaves that to its watcher (core/shm_watcher.h).
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "synk/core/barrier.h"
#include "synk/core/control_block.h"
#include "synk/core/node_span.h"
#include "synk/core/shm_segment.h"
#include "synk/core/shm_watcher.h"
#include "synk/core/waiter.h"

namespace synk {

struct ProcessGroupOptions {
  int n_ranks = 1;
  int master_rank = 0;
  // Deadline of every wait inside a command (a rank that does not arrive in time is reported).
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // Deadline of the waits of the ranks' start (backends, communicators, the startup barrier).
  std::chrono::milliseconds startup_timeout{std::chrono::minutes(2)};
  // How long a waiting rank spins before it sleeps on a futex.
  std::chrono::microseconds spin{200};
  // Yield the core while spinning; fork() sets it when ranks outnumber hardware threads.
  bool yield_while_spinning = false;
  // CPU each rank of this node binds its process to, by local rank (empty: no binding).
  std::vector<int> cpus;
  // Several nodes: n_ranks counts every node's; this process forks only its node's ranks and
  // starts the link to the other nodes (node_span.h).
  NodeSpan span;
};

// Exit codes of worker processes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFatal = 70;    // an error this rank could not report otherwise
inline constexpr int kExitAborted = 71;  // left because the session was aborted
// How long shutdown waits for a SIGKILLed worker to be reaped.
inline constexpr std::chrono::seconds kKillWait{10};

class ProcessGroup : public Liveness {
 public:
  using WorkerMain = std::function<int(ProcessGroup&)>;

  // Creates the control block and forks the workers. Each worker runs worker_main and exits with
  // its result; only the master returns from create(). On several nodes each node's launcher
  // creates its node's group: it forks its node's ranks but its own, starts the link to the other
  // nodes, and then — on node 0 — returns as the master; on another node it runs its own rank
  // (the node's first) as a worker, then ends its node's ranks and shared memory and exits
  // (_exit: 0 once the session ended, as the master closed it).
  static std::unique_ptr<ProcessGroup> create(const ProcessGroupOptions& options,
                                              const WorkerMain& worker_main);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return options_.n_ranks; }
  int masterRank() const { return options_.master_rank; }
  bool isMaster() const { return rank_ == options_.master_rank; }
  // Whether the session spans several nodes (cluster/), how, and (the process that forked this
  // node's ranks only) the link to the other nodes.
  bool spansNodes() const { return options_.span.several(); }
  const NodeSpan& span() const { return options_.span; }
  NodeLink* link() const { return link_.get(); }
  pid_t pidOf(int rank) const;
  ControlBlock& control() const { return *cb_; }
  Barrier& barrier() { return barrier_; }
  const std::string& shmPrefix() const { return shm_prefix_; }

  // A waiter with the session's deadline, starting now.
  Waiter commandWaiter(std::string what);
  // That deadline, for re-arming a waiter (Waiter::rearm).
  Clock::time_point commandDeadline() const;
  // A waiter with the start's deadline (startup_timeout), starting now.
  Waiter startupWaiter(std::string what);
  // A waiter without deadline: a worker waiting for the master's next command.
  Waiter idleWaiter();

  // Liveness probe (see class comment). Throws PeerFailure once a peer is gone.
  void check() override;
  bool aborted() const;

  // The process that forked this node's ranks only (the master; a node's launcher on the other
  // nodes). Stops the link to the other nodes, waits up to `grace` for the workers to exit (they
  // leave on a Quit command or an abort), SIGKILLs the rest, reaps them and removes the session's
  // shared memory. Idempotent.
  void shutdown(std::chrono::milliseconds grace);
  // The forking process only, after a failure: SIGKILLs every rank that missed a deadline (it will
  // not leave by itself) and removes the session's shared memory, without waiting for anything, so
  // the failure is reported at the deadline. shutdown() then reaps every worker.
  void endLateRanks();
  // Master only: the exit description of a reaped worker ("killed by signal 9 (SIGKILL)").
  std::string describeExit(int rank, int wait_status) const;

 private:
  ProcessGroup(const ProcessGroupOptions& options, SharedMapping mapping, int own_rank);
  // This process's rank's work; a failure aborts the session (unless it already was) with the
  // rank's message. Returns the exit code: the work's, kExitFatal, or kExitAborted.
  int runRank(const WorkerMain& worker_main);
  [[noreturn]] void runWorker(int rank, const WorkerMain& worker_main);
  // A node's launcher on a node without the master: its own rank as a worker, then its node's end.
  [[noreturn]] void runNodeLeader(const WorkerMain& worker_main);
  // The ranks this process forks or is: its node's (every rank on one node).
  int firstLocal() const { return options_.span.several() ? options_.span.firstRank() : 0; }
  int endLocal() const {
    return options_.span.several() ? firstLocal() + options_.span.ranks_per_node : size();
  }
  // A worker this master still has to collect: forked (a failed fork leaves pid 0, which
  // waitpid and kill would take for the whole process group) and not reaped yet.
  bool outstanding(int r) const { return r != rank_ && !reaped_[r] && pids_[r] > 0; }
  // Collects worker r if it ended (its wait status in *status, kStatusUnknown when another
  // waiter took it); false if it is still running or not outstanding.
  bool reap(int r, int* status);
  static constexpr int kStatusUnknown = -1;
  void reapExited();

  ProcessGroupOptions options_;
  SharedMapping mapping_;
  ControlBlock* cb_;
  int rank_;
  Barrier barrier_;
  std::string shm_prefix_;
  std::vector<pid_t> pids_;   // by rank
  std::vector<bool> reaped_;  // owner: whether the worker's exit was collected
  ShmWatcher watcher_;        // owner: removes the segments if this process dies first
  // The process that forked this node's ranks (the master on node 0), which reaps them and
  // removes the node's shared memory; false in the workers.
  bool owner_ = false;
  std::unique_ptr<NodeLink> link_;  // owner, on several nodes: the barriers' link to the others
  bool shut_down_ = false;
};

}  // namespace synk
