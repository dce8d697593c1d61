#pragma once
// Internal: a session in one process. The master and every worker hold one. It owns the pieces a
// session is made of and wires them together; the public handles (core/session.h) call the
// master-side methods below, which check what the master can know, build a request and run one
// step on every rank:
//
//   StepRunner (step_runner.h)    command I/O, statuses, abort; a handler per opcode
//   handlers                      DistributeHandler (distribute.h), CallHandler (call_exec.h),
//                                 CollectiveHandler (collective_exec.h): every rank's side
//   ModelTable (model_table.h)    models, their variables' storage, function bindings
//   DataStore (data_store.h)      blob ids and the rank's mappings of the master's Data
//   UniformShapes                 the collective fast path (uniform_shapes.h)
//   RankResources                 what handlers may use: rank, group, device, heap, communicators
//
// Files: session_core.cc (lifecycle), models.cc (load, bind, distribute, variables: master side),
// call.cc and call_local.cc (function calls: master side), var_collectives.cc (collectives:
// master side), data.cc (Data).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "synk/core/backend.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/process/this_process.h"
#include "synk/core/process_group.h"
#include "synk/core/session.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/session/uniform_shapes.h"
#include "synk/core/step/call_collectives.h"
#include "synk/core/step/call_exec.h"
#include "synk/core/step/collective_exec.h"
#include "synk/core/step/distribute.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

class DataImpl;
struct CollectiveRequest;

class SessionCore : public std::enable_shared_from_this<SessionCore> {
 public:
  SessionCore(const ForkOptions& options, BackendRegistry registry,
              std::shared_ptr<ModelLoader> loader, BackendFactory& factory);
  ~SessionCore();
  SessionCore(const SessionCore&) = delete;
  SessionCore& operator=(const SessionCore&) = delete;

  // ---- lifecycle (session_core.cc)
  // Forks and starts every rank's backend. Returns in the master; workers never return.
  void start();
  void close();
  bool closed() const { return closed_; }
  // Whether this process is the one that forked the ranks (not a copy of it made by fork()):
  // only that one may use, close or clean up the session.
  // After a failure was reported: joins the backend's abort, frees every resource, reaps the
  // workers. Runs at close(), at the next call, at destruction, and before this process forks
  // another session (finishPendingTeardown).
  void finishTeardown() noexcept;
  bool ownedHere() const { return owner_pid_ != 0 && owner_pid_ == thisProcessId(); }
  // Throws UsageError unless the session can run a step now (and finishes an abort that a
  // failure outside a step left pending).
  void ensureOpen();
  [[noreturn]] void throwClosed() const;
  int size() const { return options_.n_parallel; }
  int masterRank() const { return options_.master_rank; }
  const ForkOptions& options() const { return options_; }
  ProcessGroup& group() { return *group_; }
  const std::string& shmPrefix() const { return group_->shmPrefix(); }
  // Master: whether a collective asked for with `requested` (unset: native where the session
  // has it) runs natively; asked for native where there is none, throws UsageError at once.
  bool resolveNative(std::optional<bool> requested);
  // One barrier round trip through every rank.
  void barrierStep();
  // One step in which every rank waits for its device (Session::synchronize).
  void synchronizeStep();
  // Every rank's times in the last step (ForkOptions::step_times; Session::lastStepTimes).
  std::vector<RankStepTimes> lastStepTimes();

  // ---- models, functions, variables (models.cc); every lookup raises once the session closed
  Model load(const std::string& path, const ModelOptions& options);
  Function makeFunction(const Model& model, const std::string& name,
                        const FunctionOptions& options);
  void distribute();
  ModelState& modelState(uint32_t id);
  const FunctionBinding& binding(uint32_t id);
  const FunctionSpec& functionSpec(uint32_t id);
  VariableStorage& storage(uint32_t model, uint32_t index);
  const VariableSpec& variableSpec(uint32_t model, uint32_t index);
  // Master's copy of a variable, to host.
  Array readLocalVariable(uint32_t model, uint32_t index);
  void writeLocalVariable(uint32_t model, uint32_t index, const ArrayView& value, bool force_cast);
  // Checks a handle belongs to this session; returns (model, variable index).
  std::pair<uint32_t, uint32_t> resolve(const Variable& variable, const std::string& what);
  // Checks a Data handle belongs to this session and holds memory.
  const DataImpl& resolve(const Data& data, const std::string& what);
  // Sets the master's copy (no mirrored check: broadcast uses it).
  void setStorage(uint32_t model, uint32_t index, const ArrayView& value, bool force_cast);

  // ---- function calls (call.cc, call_local.cc)
  std::vector<Array> callFunction(uint32_t id, const std::vector<Data>& inputs,
                                  const CallOptions& options);
  std::vector<Array> callLocal(uint32_t id, const std::vector<ArrayView>& inputs);

  // ---- shared-variable collectives (var_collectives.cc)
  void broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                 bool native);
  void scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
               const Selection& batch);
  std::vector<Array> gather(const std::vector<Variable>& vars, int nd_up, bool native);
  void allGather(const std::vector<Variable>& vars, bool native);
  std::vector<Array> reduce(const std::vector<Variable>& vars, ReduceOp op, bool in_place,
                            bool native);
  void allReduce(const std::vector<Variable>& vars, ReduceOp op, bool native);
  void setValue(int rank, const std::vector<Variable>& vars, const std::vector<Data>& values,
                const Selection& batch);
  std::vector<Array> getValue(int rank, const std::vector<Variable>& vars);
  std::vector<std::vector<Shape>> getShapes(const std::vector<Variable>& vars);

  // ---- data (data.cc)
  Data makeData(DType dtype, const Shape& shape, const DataOptions& options);
  uint64_t nextBlobId() { return data_.nextBlobId(); }
  // Master: a Data blob went away; the next step tells the ranks to drop their mapping.
  void releaseBlob(uint64_t id) { data_.released(id); }

 private:
  // Master: runs one step on every rank (StepRunner::run) once the session is open.
  StepResult runStep(Opcode opcode, const ByteWriter& payload, const std::string& what,
                     bool post = false);
  // The master side of every collective (var_collectives.cc).
  StepResult runCollective(const CollectiveRequest& request);
  // Master: the fast path's shapes for every variable of the request, if all are known.
  void useKnownShapes(CollectiveRequest& request);
  // Master: waits for the device outside a step (loading a model, reading a variable); a failure
  // aborts the session like one inside a step.
  void synchronizeOutsideStep(const std::string& what);
  // One distribute step for these models and functions.
  void runDistribute(const std::vector<uint32_t>& models, const std::vector<uint32_t>& functions);

  int workerMain(ProcessGroup& group);
  void startBackend();
  // Master, after a fatal error: marks the session aborted everywhere (workers leave), starts the
  // backend's abort on a thread of its own (an NCCL abort takes ~0.5 s per communicator), kills
  // the ranks that missed a deadline and removes the shared memory, then returns: the failure is
  // reported at once. finishTeardown() completes it.
  void abortAndClose(const std::string& reason) noexcept;

  void releaseResources() noexcept;
  // In a copy of the master made by fork(): lets go of everything without freeing it (the
  // device, the plugin instances and the shared memory are the master's).
  void abandonCopy() noexcept;
  [[noreturn]] void throwCopy() const;

  ForkOptions options_;
  BackendRegistry registry_;
  std::shared_ptr<ModelLoader> loader_;
  BackendFactory* factory_;
  std::unique_ptr<ProcessGroup> owned_group_;  // master only
  ProcessGroup* group_ = nullptr;
  std::unique_ptr<ShmHeap> heap_;
  std::unique_ptr<Backend> backend_;

  RankResources rank_;  // filled by startBackend
  DataStore data_;
  ModelTable models_{rank_};
  UniformShapes uniform_shapes_;
  InCallCollectives call_collectives_{rank_};
  StepRunner steps_;
  class BarrierHandler final : public StepHandler {
    StepResult run(ByteReader&, Waiter&) override { return {}; }
  } barrier_handler_;
  // Every rank waits until its device has finished what was issued so far.
  class SynchronizeHandler final : public StepHandler {
   public:
    explicit SynchronizeHandler(const RankResources& rank) : rank_(rank) {}
    StepResult run(ByteReader&, Waiter& waiter) override {
      rank_.device->synchronize(waiter);
      return {};
    }

   private:
    const RankResources& rank_;
  } synchronize_handler_{rank_};
  DistributeHandler distribute_handler_;
  CallHandler call_handler_{rank_, models_, call_collectives_};
  CollectiveHandler collective_handler_{rank_, models_, uniform_shapes_};

  // master only
  std::thread backend_abort_;  // the backend's abort, started by abortAndClose
  bool teardown_pending_ = false;
  pid_t owner_pid_ = 0;  // the master's pid (a copy made by fork() has another)
  bool abandoned_ = false;
  bool closed_ = false;
  std::string abort_reason_;
};

// The session open in this process, if any (one per process: fork semantics).
SessionCore* openSession();
// Completes the teardown of a session whose failure was reported but not yet closed (fork()
// does this before forking another one).
void finishPendingTeardown() noexcept;

}  // namespace synk::detail
