#pragma once
// Internal: a session's life in one process: forking the ranks, starting each rank's backend,
// the open/closed/aborted state every master-side call checks first, running a step once the
// session is open, and the teardown (orderly at close(), or after a failure). It owns the process
// group and the rank's heap and backend (RankBackend, session/rank_backend.h); the tables those
// fill and free (RankResources, DataStore, ModelTable, the collective handler's buffers) belong
// to SessionCore, which wires them.
#include <sys/types.h>

#include <memory>
#include <string>

#include "synk/core/backend.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/process/this_process.h"
#include "synk/core/process_group.h"
#include "synk/core/session.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_backend.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/step/collective_exec.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

class SessionLifecycle {
 public:
  // What it starts and frees, owned by the session (SessionCore).
  struct Parts {
    RankResources& rank;
    DataStore& data;
    ModelTable& models;
    CollectiveHandler& collective_handler;
    StepRunner& steps;
  };

  SessionLifecycle(const ForkOptions& options, BackendRegistry registry, BackendFactory& factory,
                   Parts parts);
  ~SessionLifecycle();
  SessionLifecycle(const SessionLifecycle&) = delete;
  SessionLifecycle& operator=(const SessionLifecycle&) = delete;

  // Forks and starts every rank's backend. Returns in the master; workers never return (nor does
  // a node's launcher on a node without the master: `span`, node_span.h).
  void start(const NodeSpan& span = {});
  void close();
  bool closed() const { return closed_; }
  // Whether this process is the one that forked the ranks (not a copy of it made by fork()):
  // only that one may use, close or clean up the session.
  bool ownedHere() const { return owner_pid_ != 0 && owner_pid_ == thisProcessId(); }
  // After a failure was reported: joins the backend's abort, frees every resource, reaps the
  // workers. Runs at close(), at the next call, at destruction, and before this process forks
  // another session (finishPendingTeardown).
  void finishTeardown() noexcept;
  // Throws UsageError unless the session can run a step now (and finishes an abort that a
  // failure outside a step left pending).
  void ensureOpen();
  [[noreturn]] void throwClosed() const;
  // Master: runs one step on every rank (StepRunner::run) once the session is open.
  StepResult runStep(Opcode opcode, const ByteWriter& payload, const std::string& what,
                     bool post = false);
  // Master: waits for the device outside a step (loading a model, reading a variable); a failure
  // aborts the session like one inside a step.
  void synchronizeOutsideStep(const std::string& what);
  // Master, after a fatal error: marks the session aborted everywhere (workers leave), starts the
  // backend's abort on a thread of its own (an NCCL abort takes ~0.5 s per communicator), kills
  // the ranks that missed a deadline and removes the shared memory, then returns: the failure is
  // reported at once. finishTeardown() completes it.
  void abortAndClose(const std::string& reason) noexcept;

  int size() const { return options_.n_parallel; }
  const ForkOptions& options() const { return options_; }
  ProcessGroup& group() { return *group_; }
  const std::string& shmPrefix() const { return group_->shmPrefix(); }
  Backend& backend() { return *rank_backend_.get(); }

 private:
  int workerMain(ProcessGroup& group);
  // In a copy of the master made by fork(): lets go of everything without freeing it (the
  // device, the plugin instances and the shared memory are the master's).
  void abandonCopy() noexcept;
  [[noreturn]] void throwCopy() const;

  ForkOptions options_;
  BackendRegistry registry_;
  BackendFactory* factory_;
  StepRunner& steps_;
  std::unique_ptr<ProcessGroup> owned_group_;  // master only
  ProcessGroup* group_ = nullptr;
  RankBackend rank_backend_;

  // master only
  bool teardown_pending_ = false;
  pid_t owner_pid_ = 0;  // the master's pid (a copy made by fork() has another)
  bool closed_ = false;
  std::string abort_reason_;
};

// The session open in this process, if any (one per process: fork semantics).
SessionLifecycle* openSession();
// Completes the teardown of a session whose failure was reported but not yet closed (fork()
// does this before forking another one).
void finishPendingTeardown() noexcept;

}  // namespace synk::detail
