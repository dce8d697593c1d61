#pragma once
// Internal: the state of a session in one process. The master and every worker hold one; the
// master's also holds what only it needs (Data handles, what is not yet distributed). Commands
// are issued by the master and executed by every rank through the same handler (SPMD), so all
// state that steers control flow is either sent in the command or agreed on at a barrier.
//
// Files: session_core.cc (lifecycle, step protocol), models.cc (load, bind, distribute,
// variables), call.cc (function calls: master side), call_exec.cc (function calls: every rank),
// var_collectives.cc (shared-variable collectives), data.cc (Data).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/blob.h"
#include "core/byte_io.h"
#include "core/call_collectives.h"
#include "core/command.h"
#include "core/device_buffer.h"
#include "core/heap_buffer.h"
#include "core/model.h"
#include "core/process_group.h"
#include "core/session.h"
#include "core/shm_heap.h"
#include "core/this_process.h"

namespace synk::detail {

// One shared variable on this rank.
struct VariableStorage {
  DType dtype = DType::Float32;
  Shape shape;
  DeviceBuffer buffer;
  size_t bytes() const { return static_cast<size_t>(numElements(shape)) * dtypeSize(dtype); }
  TensorRef tensor() const { return {buffer.data(), dtype, shape}; }
};

struct ModelState {
  uint32_t id = 0;
  std::string path;
  ModelOptions options;  // what the model was loaded with; every rank loads it with the same
  std::shared_ptr<LoadedModel> model;
  std::unique_ptr<ModelInstance> instance;
  std::vector<VariableStorage> variables;  // ModelSpec::variables order
  bool distributed = false;                // master: replicated on every rank
  std::string dropped;  // master: why it was dropped (creating it failed on a rank); else empty
  const ModelSpec& spec() const { return model->spec(); }
};

// How a function is bound; identical on every rank (sent by distribute).
struct FunctionBinding {
  uint32_t id = 0;
  uint32_t model = 0;
  uint32_t index = 0;                // into ModelSpec::functions
  std::vector<uint8_t> broadcast;    // per input: 1 = used whole, 0 = scattered
  std::vector<ReduceOp> output_ops;  // per output
  std::vector<ReduceOp> update_ops;  // per update
  std::vector<uint8_t> sliceable;    // per read variable
  std::vector<int32_t> update_vars;  // per update: index of the variable in the model
  std::vector<int32_t> read_vars;    // per read: index of the variable in the model
  bool distributed = false;          // master only
  std::string what;                  // master only: "call of function 'f'", for messages
  std::string dropped;               // master only: why (its model was dropped); else empty

  bool hasScatteredInputs() const;
  bool hasSliceableReads() const;
  void write(ByteWriter& out) const;
  static FunctionBinding read(ByteReader& in);
};

// Device buffers a function reuses from call to call on one rank.
struct FunctionScratch {
  std::vector<DeviceBuffer> inputs;        // per input: device copy or gathered rows
  std::vector<HeapBuffer> staging;         // per input: host rows gathered for a device copy
  std::vector<DeviceBuffer> reads;         // per read: gathered sliceable rows
  std::vector<DeviceBuffer> update_slice;  // per update: what the slice computes
  std::vector<DeviceBuffer> update_acc;    // per update: accumulated over slices
  std::vector<DeviceBuffer> output_slice;  // per output
  std::vector<DeviceBuffer> output_acc;    // per output
  std::vector<std::vector<DeviceBuffer>> gather_parts;  // per output, per slice (gather op)
  DeviceBuffer result;                                  // master: gathered output
};

class DataImpl;

class SessionCore : public std::enable_shared_from_this<SessionCore> {
 public:
  SessionCore(const ForkOptions& options, BackendRegistry registry,
              std::shared_ptr<ModelLoader> loader, BackendFactory& factory);
  ~SessionCore();
  SessionCore(const SessionCore&) = delete;
  SessionCore& operator=(const SessionCore&) = delete;

  // ---- lifecycle and steps (session_core.cc)
  // Forks and starts every rank's backend. Returns in the master; workers never return.
  void start();
  void close();
  bool closed() const { return closed_; }
  // Whether this process is the one that forked the ranks (not a copy of it made by fork()):
  // only that one may use, close or clean up the session.
  bool ownedHere() const { return owner_pid_ != 0 && owner_pid_ == thisProcessId(); }
  // Throws UsageError unless the session can run a step now (and finishes an abort that a
  // failure outside a step left pending).
  void ensureOpen();
  [[noreturn]] void throwClosed() const;
  // Master: waits for the device outside a step (loading a model, reading a variable); a failure
  // aborts the session like one inside a step.
  void synchronizeOutsideStep(const std::string& what);
  int size() const { return options_.n_parallel; }
  int rank() const { return group_->rank(); }
  int masterRank() const { return options_.master_rank; }
  bool isMaster() const { return group_->isMaster(); }
  const ForkOptions& options() const { return options_; }
  ProcessGroup& group() { return *group_; }
  Device& device() { return backend_->device(); }
  Communicator& communicator(bool native) { return backend_->communicator(native); }
  // The communicator of the runtime's own collectives (outputs, distribute): native where the
  // session has it.
  Communicator& defaultCommunicator() {
    return backend_->communicator(backend_->nativeUnavailable() == nullptr);
  }
  // The collective fast path (core/README.md): the master skips a collective's shape exchange
  // for variables every rank is known to hold with the same shape. Learnt from an exchange
  // (rememberUniformShape, committed once the step succeeded) and forgotten as soon as any rank's
  // shape generation (RankSlot::shape_generation, bumped by reshapeStorage) moves.
  bool knownUniformShape(uint32_t model, uint32_t index, Shape& shape);
  void rememberUniformShape(uint32_t model, uint32_t index, const Shape& shape);
  // Master: whether a collective asked for with `requested` (unset: native where the session
  // has it) runs natively; asked for native where there is none, throws UsageError at once.
  bool resolveNative(std::optional<bool> requested);
  ShmHeap& heap() { return *heap_; }
  // What models get as RankInfo::collectives; CallExecution scopes it to each call.
  InCallCollectives& callCollectives() { return call_collectives_; }
  BlobCache& blobs() { return *blobs_; }
  const std::string& shmPrefix() const { return group_->shmPrefix(); }

  // Master: runs one step on every rank (the master's share included) and throws the first
  // failing rank's error; aborts the session when a step fails fatally.
  void runCommand(Opcode opcode, const ByteWriter& payload, const std::string& what);
  void barrierStep();

  // ---- models, functions, variables (models.cc)
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
  // Resizes a variable's storage on this rank (contents lost when it grows).
  void reshapeStorage(VariableStorage& storage, const Shape& shape);

  // ---- function calls (call.cc, call_exec.cc)
  std::vector<Array> callFunction(uint32_t id, const std::vector<Data>& inputs,
                                  const CallOptions& options);
  std::vector<Array> callLocal(uint32_t id, const std::vector<ArrayView>& inputs);
  FunctionScratch& scratch(uint32_t id) { return scratch_.at(id); }
  // Results of the master's share of the running step, collected by the master-side caller.
  std::vector<Array>& results() { return results_; }
  std::vector<std::vector<Shape>>& shapeResults() { return shape_results_; }

  // ---- shared-variable collectives (var_collectives.cc); master side
  void broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                 bool nccl);
  void scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
               const Selection& batch);
  std::vector<Array> gather(const std::vector<Variable>& vars, int nd_up, bool nccl);
  void allGather(const std::vector<Variable>& vars, bool nccl);
  std::vector<Array> reduce(const std::vector<Variable>& vars, ReduceOp op, bool in_place,
                            bool nccl);
  void allReduce(const std::vector<Variable>& vars, ReduceOp op, bool nccl);
  void setValue(int rank, const std::vector<Variable>& vars, const std::vector<Data>& values,
                const Selection& batch);
  std::vector<Array> getValue(int rank, const std::vector<Variable>& vars);
  std::vector<std::vector<Shape>> getShapes(const std::vector<Variable>& vars);

  // Checks a handle belongs to this session; returns (model, variable index).
  std::pair<uint32_t, uint32_t> resolve(const Variable& variable, const std::string& what);
  // Checks a Data handle belongs to this session and holds memory.
  const DataImpl& resolve(const Data& data, const std::string& what);
  // Sets the master's copy (no mirrored check: broadcast uses it).
  void setStorage(uint32_t model, uint32_t index, const ArrayView& value, bool force_cast);
  // Master: reused result buffer of reduce and gather.
  DeviceBuffer& collectiveBuffer() { return collective_buffer_; }

  // ---- data (data.cc)
  Data makeData(DType dtype, const Shape& shape, const DataOptions& options);
  uint64_t nextBlobId() { return next_blob_id_++; }
  // Master: a Data blob went away; the next step tells the ranks to drop their mapping.
  void releaseBlob(uint64_t id) { pending_releases_.push_back(id); }

 private:
  int workerMain(ProcessGroup& group);
  int workerLoop();
  void startBackend();
  void writeCommand(Opcode opcode, const ByteWriter& payload);
  ByteReader readCommand(Opcode& opcode, std::vector<std::byte>& blob_copy);
  Status execute(Opcode opcode, ByteReader& payload, Waiter& waiter);
  void throwStatuses();
  // Master, after every step's end barrier: reads each rank's shape generation.
  void noteShapeGenerations();
  // After a fatal error: aborts the session everywhere, ends the workers, frees everything.
  void abortAndClose(const std::string& reason) noexcept;
  void releaseResources() noexcept;
  // In a copy of the master made by fork(): lets go of everything without freeing it (the
  // device, the plugin instances and the shared memory are the master's).
  void abandonCopy() noexcept;
  [[noreturn]] void throwCopy() const;

  Status executeDistribute(ByteReader& in, Waiter& waiter);
  // One distribute step for these models and functions (models.cc).
  void runDistribute(const std::vector<uint32_t>& models, const std::vector<uint32_t>& functions);
  // A model whose creation failed on some rank: released here, its handles and functions raise.
  void dropModel(uint32_t id, const std::string& why);
  Status executeCall(ByteReader& in, Waiter& waiter);
  Status executeCollective(ByteReader& in, Waiter& waiter);

  ForkOptions options_;
  BackendRegistry registry_;
  std::shared_ptr<ModelLoader> loader_;
  BackendFactory* factory_;
  std::unique_ptr<ProcessGroup> owned_group_;  // master only
  ProcessGroup* group_ = nullptr;
  std::unique_ptr<ShmHeap> heap_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<BlobCache> blobs_;
  std::vector<ModelState> models_;
  std::vector<FunctionBinding> functions_;
  std::vector<FunctionScratch> scratch_;

  InCallCollectives call_collectives_{*this};
  std::vector<Array> results_;
  std::vector<std::vector<Shape>> shape_results_;
  DeviceBuffer collective_buffer_;
  uint64_t shape_generation_ = 0;  // this rank's: bumped whenever a variable's shape changes

  // master only
  pid_t owner_pid_ = 0;  // the master's pid (a copy made by fork() has another)
  bool abandoned_ = false;
  bool closed_ = false;
  std::string abort_reason_;
  uint64_t next_blob_id_ = 1;
  std::vector<uint64_t> pending_releases_;
  std::unique_ptr<ShmSegment> payload_blob_;
  uint64_t payload_blob_id_ = 0;
  uint64_t payload_blob_generation_ = 0;
  // The collective fast path: (model << 32 | index) -> the shape every rank holds.
  std::unordered_map<uint64_t, Shape> uniform_shapes_;
  std::vector<std::pair<uint64_t, Shape>> pending_uniform_;  // learnt in the current step
  std::vector<uint64_t> known_generations_;                  // per rank, as last read
};

// The session open in this process, if any (one per process: fork semantics).
SessionCore* openSession();

}  // namespace synk::detail
