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
  // CPU each rank binds its process to (empty: no binding).
  std::vector<int> cpus;
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
  // its result; only the master returns from create().
  static std::unique_ptr<ProcessGroup> create(const ProcessGroupOptions& options,
                                              const WorkerMain& worker_main);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return options_.n_ranks; }
  int masterRank() const { return options_.master_rank; }
  bool isMaster() const { return rank_ == options_.master_rank; }
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

  // Master only. Waits up to `grace` for the workers to exit (they leave on a Quit command or an
  // abort), SIGKILLs the rest, reaps them and removes the session's shared memory. Idempotent.
  void shutdown(std::chrono::milliseconds grace);
  // Master only, after a failure: SIGKILLs every rank that missed a deadline (it will not leave
  // by itself) and removes the session's shared memory, without waiting for anything, so the
  // failure is reported at the deadline. shutdown() then reaps every worker.
  void endLateRanks();
  // Master only: the exit description of a reaped worker ("killed by signal 9 (SIGKILL)").
  std::string describeExit(int rank, int wait_status) const;

 private:
  ProcessGroup(const ProcessGroupOptions& options, SharedMapping mapping);
  [[noreturn]] void runWorker(int rank, const WorkerMain& worker_main);
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
  std::vector<bool> reaped_;  // master: whether the worker's exit was collected
  ShmWatcher watcher_;        // master: removes the segments if this process dies first
  bool shut_down_ = false;
};

}  // namespace synk
