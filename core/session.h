#pragma once
// The synk programming model (Synkhronos, in C++):
//
//   auto session = synk::fork({.n_parallel = 2});          // synk/synk.h: default backends
//   auto model = session.load("libmy_model.so");           // a model plugin
//   auto f = session.function(model, "train", {.broadcast = {"y"}});
//   session.distribute();                                  // optional: runs on first call
//   auto x = session.data(x_array);                        // shared-memory input
//   std::vector<synk::Array> out = f({x, y});              // every rank runs its rows
//
// Every method is called by the master (the process that called fork()); workers execute the
// matching step in lock step, guarded by barriers. Handles (Data, Model, Variable, Function) stay
// valid while their session is open; using one after close() raises UsageError. A child the
// master forks itself without exec (a checkpoint writer) inherits copies of the handles: using
// them raises UsageError, and neither its exit nor its dropped handles close or free anything of
// the master's session.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/model.h"
#include "synk/core/node_span.h"
#include "synk/core/reduce_op.h"
#include "synk/core/selection.h"

namespace synk {

namespace detail {
class SessionCore;
class DataImpl;
}  // namespace detail

class BackendRegistry;
class ModelLoader;  // core/model_loader.h: how models are loaded (plugins/host implements it)

struct ForkOptions {
  // Number of ranks; 0 = one per device the backend sees (cpu: hardware threads). On several
  // nodes (under mpirun or srun, cluster/README.md): every node's, nodes x ranks_per_node.
  int n_parallel = 0;
  // On several nodes: ranks on each node; 0 = one per device the backend sees there (simulated
  // nodes of one GPU host, SYNK_SIMULATE_NODES: its GPUs split between them). Ignored on one
  // node.
  int ranks_per_node = 0;
  std::string backend = "cpu";
  // Which rank the master process is (it computes that rank's share and is the root of reduce
  // and gather).
  int master_rank = 0;
  // Device of each rank (cuda: ordinals as CUDA numbers them after CUDA_VISIBLE_DEVICES);
  // empty = rank r uses device r. Ranks may share a device ({0, 0}: two ranks on one GPU, to
  // develop multi-rank code on one GPU); NCCL then is not available (it needs one GPU per
  // rank) and collectives run host-staged.
  std::vector<int> devices{};
  // Deadline of every wait inside a step: a rank that does not arrive in time is reported and
  // the session is aborted.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // Deadline of the session's start: every rank's backend up (NCCL's communicators take seconds
  // on several GPUs) and at the startup barrier. Apart from `timeout` so that a short step
  // deadline does not fail the start.
  std::chrono::milliseconds startup_timeout{std::chrono::minutes(2)};
  // How long a waiting rank spins before sleeping (keeps a step round trip in microseconds).
  std::chrono::microseconds spin{200};
  // cpu backend: pin rank r to the r-th CPU this process may run on (when there are at least as
  // many), so spinning ranks never share a core, as MPI binds its ranks. Off by default: the
  // master's thread is pinned too, and threads the program starts later inherit that.
  bool bind_cpus = false;
  // Every rank times each step by phase, and the master can read the last step's times
  // (Session::lastStepTimes): where a step's time goes, rank by rank. Off: nothing is timed.
  bool step_times = false;
};

// One rank's time in the last step, by phase, in nanoseconds (ForkOptions::step_times). The
// phases follow one another on the host, except device_ns: the span of the call's plugin work on
// the rank's device, from the device reaching the call (at once when it was idle) to its last
// work finished, so it includes any time the device waited for the plugin to issue work (a
// plugin that sleeps on the host shows its sleep here too); -1 on the host device, where
// plugin_ns is the work itself, and in steps that run no plugin.
struct RankStepTimes {
  int rank = 0;
  int64_t start_ns = 0;        // master: waiting for every rank to take the step
  int64_t inputs_ns = 0;       // the call's inputs onto the device
  int64_t plugin_ns = 0;       // the plugin's function issuing (on the host device: doing) it
  int64_t device_ns = -1;      // the plugin's work on the device
  int64_t output_copy_ns = 0;  // small outputs copied out and waited for (the wait is in
                               // device_wait_ns too)
  int64_t agree_ns = 0;        // the agreement exchange: waiting for the slowest rank
  int64_t finish_ns = 0;       // updates applied, outputs reduced onto the master
  int64_t device_wait_ns = 0;  // other waits for the device
  int64_t collective_ns = 0;   // a collective step's collective
  int64_t end_ns = 0;          // waiting for every rank at the step's end
  int64_t step_ns = 0;         // the step's handler, whole (start and end waits excluded)
  // Not a time: the all-reduces the model issued in the step in a window (the update buffers
  // the ranks agreed on, where NCCL runs its symmetric kernels; 0 where the backend has no
  // windows, and in a step the model replays from a captured CUDA graph, which issues none).
  int64_t window_all_reduces = 0;
};

struct DataOptions {
  std::string name{};
  // Minibatch data is indexed relative to the smallest row of a call's batch.
  bool minibatch = false;
  bool force_cast = false;
  // Allocation slack in [1, 2]: room to grow without reallocating.
  double oversize = 1.0;
  // cuda: every rank keeps a copy in its GPU's memory, made when a call first uses the Data and
  // again after it changes (setValue, setShape, set, freeMemory; not writes through view()), so
  // calls select rows there (an index batch is one gather kernel) instead of copying them from
  // shared memory. A training set placed on the GPUs once. The cpu backend ignores it.
  bool device_resident = false;
};

class Session;

// An n-d array in shared memory that every rank reads directly (function inputs, scatter
// sources). dtype and ndim are fixed at creation.
class Data {
 public:
  Data() = default;
  uint64_t id() const;
  const std::string& name() const;
  DType dtype() const;
  int ndim() const;
  const Shape& shape() const;
  int64_t size() const;
  int64_t length() const;
  // Elements the allocation holds (>= size()).
  int64_t allocSize() const;
  bool minibatch() const;

  // Writes a value: same ndim; dtype cast only if safe (or force_cast); reallocates (keeping
  // `oversize` slack) when it does not fit.
  void setValue(const ArrayView& value, bool force_cast = false, double oversize = 1.0);
  // The array setValue would store (dtype and shape), without storing it.
  Array conditionData(const ArrayView& value, bool force_cast = false) const;
  // Reshape / change axis 0. Contents within the old size are kept, the rest zero-filled.
  void setShape(const Shape& shape, double oversize = 1.0);
  void setLength(int64_t length, double oversize = 1.0);
  // Drops the allocation (the only way to shrink it); shape becomes 0 along axis 0.
  void freeMemory();

  // The array in shared memory; valid until the next reallocation.
  ArrayView view() const;
  ArrayView row(int64_t index) const;
  double get(std::initializer_list<int64_t> index) const;
  void set(std::initializer_list<int64_t> index, double value);
  Array value() const { return Array::copyOf(view()); }
  template <typename T>
  T* as() const {
    return view().as<T>();
  }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  friend class Session;
  friend class detail::SessionCore;
  explicit Data(std::shared_ptr<detail::DataImpl> impl) : impl_(std::move(impl)) {}
  detail::DataImpl& impl() const;
  std::shared_ptr<detail::DataImpl> impl_;
};

class Model;

// A shared variable of a model: one copy per rank, in device memory.
class Variable {
 public:
  Variable() = default;
  const std::string& name() const;
  DType dtype() const;
  VariableKind kind() const;
  // The master's copy's shape.
  Shape shape() const;
  // The master's copy (plain, mirrored), or the sum/mean over every rank (rank_local).
  Array getValue() const;
  // Sets the master's copy only (Theano's set_value in the master). A mirrored variable may be
  // set this way only before it is distributed; afterwards use Session::broadcast.
  void setValue(const ArrayView& value, bool force_cast = false);
  void setValue(const Data& value, bool force_cast = false);

 private:
  friend class Model;
  friend class Session;
  friend class detail::SessionCore;
  Variable(std::shared_ptr<detail::SessionCore> core, uint32_t model, uint32_t index)
      : core_(std::move(core)), model_(model), index_(index) {}
  std::shared_ptr<detail::SessionCore> core_;
  uint32_t model_ = 0;
  uint32_t index_ = 0;
};

class Model {
 public:
  Model() = default;
  const std::string& name() const;
  const std::string& source() const;
  // The options it was loaded with (spec().options lists the ones it accepts).
  const ModelOptions& options() const;
  const ModelSpec& spec() const;
  Variable variable(const std::string& name) const;
  std::vector<Variable> variables() const;

 private:
  friend class Session;
  friend class detail::SessionCore;
  Model(std::shared_ptr<detail::SessionCore> core, uint32_t id) : core_(std::move(core)), id_(id) {}
  std::shared_ptr<detail::SessionCore> core_;
  uint32_t id_ = 0;
};

struct FunctionOptions {
  // Inputs used whole on every rank; every other input is scattered along axis 0.
  std::vector<std::string> broadcast{};
  // Output name -> reduce op: avg (weighted by the rows each rank computed), sum, prod, max, min,
  // gather (concatenate along axis 0 in rank order), none (the master's own value). Default: avg
  // for a floating-point output, sum for an integer one (avg cannot reduce integers).
  std::map<std::string, std::string> outputs{};
  // Updated variable -> op combining the slices' updates when num_slices > 1 (default avg,
  // weighted by slice rows). Updates are always applied locally, on each rank, once.
  std::map<std::string, std::string> updates{};
  // Shared variables (read by the function) that act as data: subject to batch_s and slicing.
  std::vector<std::string> sliceable{};
};

struct CallOptions {
  // Rows of the scattered inputs to use, chosen before scattering: all, count, range or an
  // index list (each rank gathers its own rows from shared memory).
  Selection batch{};
  // Rows of the sliceable variables, applied on each rank after scattering: empty = all rows;
  // one selection for every rank; or one per rank.
  std::vector<Selection> batch_s{};
  // Each rank runs its share in this many slices; outputs and updates accumulate; every slice
  // sees the original shared values; updates apply once at the end.
  int num_slices = 1;
  // Names of the outputs to return, in this order (Theano's output_subset); empty = all. The
  // others are neither reduced nor returned, and the plugin is told it need not compute them
  // (SDK: Call::wants). Updates are applied either way.
  std::vector<std::string> output_subset{};
};

class Function {
 public:
  Function() = default;
  const std::string& name() const;
  std::vector<ReduceOp> outputOps() const;
  std::vector<ReduceOp> updateOps() const;

  // Runs on every rank. inputs: one Data per declared input, in declaration order. Returns one
  // host array per output (reduced on the master).
  //
  // Every rank runs the function, also a rank whose share of the batch is empty (a batch of 3
  // rows on 4 ranks, the last partial batch of an epoch): it runs on zero rows, so its updates
  // are what the function computes from nothing (a zero gradient), never the previous step's
  // values, and a step's result does not depend on how rows fall on ranks. Outputs reduce over
  // the ranks that had rows: a zero-row rank weighs nothing in avg and adds the op's identity
  // otherwise. A call selecting no rows at all runs every rank on zero rows and reduces their
  // values with equal weights: the result is what asLocal returns on zero rows (NaN for a
  // mean). An output with op none is the master's own value, from zero rows too.
  std::vector<Array> operator()(const std::vector<Data>& inputs,
                                const CallOptions& options = {}) const;
  // The same with plain arrays, copied into new Data first (safe casts only), as buildInputs.
  std::vector<Array> operator()(const std::vector<ArrayView>& inputs,
                                const CallOptions& options = {}) const;
  // Picks the Data form for a braced list of Data and for {} (no inputs).
  std::vector<Array> operator()(std::initializer_list<Data> inputs,
                                const CallOptions& options = {}) const;
  // Runs in the master only, on whole host arrays, updating the master's variables (like
  // Theano's function in one process): the single-process reference.
  std::vector<Array> asLocal(const std::vector<ArrayView>& inputs) const;
  // One new Data per input, holding these values.
  std::vector<Data> buildInputs(const std::vector<ArrayView>& values,
                                const DataOptions& options = {}) const;

 private:
  friend class Session;
  friend class detail::SessionCore;
  Function(std::shared_ptr<detail::SessionCore> core, uint32_t id)
      : core_(std::move(core)), id_(id) {}
  std::shared_ptr<detail::SessionCore> core_;
  uint32_t id_ = 0;
};

struct CollectiveOptions {
  // The backend's native collectives (Backend::communicator(native)): on cuda true = NCCL, false
  // = host staging through the shared-memory communicator; the cpu backend has shared memory
  // only. Unset = native where the session has it (not when ranks share a GPU: then
  // host-staged). Asking for native collectives on a session without them raises UsageError
  // naming why and the alternative.
  std::optional<bool> native{};
};

class Session {
 public:
  // A session that was never forked: every call raises UsageError.
  Session() = default;
  // Closes the session (as close() does) when the owning handle goes away.
  ~Session();
  Session(Session&&) noexcept = default;
  Session& operator=(Session&& other) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int size() const;
  int masterRank() const;
  const std::string& backend() const;
  bool closed() const;
  // Process id of every rank (the master's own included), for diagnostics; 0 for a rank on
  // another node (its pid means nothing on this one).
  std::vector<int> pids() const;

  // A plugin by path ("build/lib/libmy_model.so", "./libm.so") or by name ("my_model": the file
  // libmy_model.so on the plugin search path: $SYNK_PLUGIN_PATH, then the installed plugin
  // folder, then the build's lib/; core/plugin_search.h). Not found: PluginError listing where.
  // Every rank builds the model with `options` (key -> value as text; the model declares the
  // keys it accepts: any other key is an error naming the key and the valid ones).
  Model load(const std::string& plugin_path, const ModelOptions& options = {});
  Function function(const Model& model, const std::string& name,
                    const FunctionOptions& options = {});
  // Replicates models (their variables broadcast from the master) and functions made since the
  // last distribute on every rank. Runs implicitly before the first call that needs it. A model
  // that cannot be created on some rank is dropped (PluginError, once; its handles and functions
  // raise UsageError from then on) and the session goes on with the others.
  void distribute();

  Data data(DType dtype, int ndim, const DataOptions& options = {});
  Data data(DType dtype, const Shape& shape, const DataOptions& options = {});
  Data data(const ArrayView& value, const DataOptions& options = {});

  // Shared-variable collectives (one variable or several). Every value that goes in may be a
  // Data or a plain array (an array is copied into a new Data first, cast safely to the
  // variable's dtype; a Data is used in place where the collective reads shared memory).
  void broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values = {},
                 const CollectiveOptions& options = {});
  void broadcast(const std::vector<Variable>& vars, const std::vector<Data>& values,
                 const CollectiveOptions& options = {});
  void broadcast(const std::vector<Variable>& vars, std::initializer_list<ArrayView> values,
                 const CollectiveOptions& options = {});
  void scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
               const Selection& batch = {});
  void scatter(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
               const Selection& batch = {});
  void scatter(const std::vector<Variable>& vars, std::initializer_list<Data> values,
               const Selection& batch = {});
  std::vector<Array> gather(const std::vector<Variable>& vars, int nd_up = 1,
                            const CollectiveOptions& options = {});
  void allGather(const std::vector<Variable>& vars, const CollectiveOptions& options = {});
  std::vector<Array> reduce(const std::vector<Variable>& vars, ReduceOp op = ReduceOp::Avg,
                            bool in_place = true, const CollectiveOptions& options = {});
  void allReduce(const std::vector<Variable>& vars, ReduceOp op = ReduceOp::Avg,
                 const CollectiveOptions& options = {});
  void setValue(int rank, const std::vector<Variable>& vars, const std::vector<Data>& values,
                const Selection& batch = {});
  void setValue(int rank, const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                const Selection& batch = {});
  void setValue(int rank, const std::vector<Variable>& vars, std::initializer_list<Data> values,
                const Selection& batch = {});
  std::vector<Array> getValue(int rank, const std::vector<Variable>& vars);
  // [variable][rank]
  std::vector<std::vector<int64_t>> getLengths(const std::vector<Variable>& vars);
  std::vector<std::vector<Shape>> getShapes(const std::vector<Variable>& vars);

  // One barrier round trip through every rank (what every step costs at least).
  void barrier();
  // Returns when every rank's device has finished the work issued so far. On GPUs collectives
  // return with their work queued on each rank's stream (ordered before anything that reads the
  // variables later, so no call needs this for correctness); this is what a caller timing them,
  // or handing a rank's memory to something outside synk, waits with. Nothing on cpu ranks.
  void synchronize();
  // With ForkOptions::step_times: every rank's time in the last step that every rank ended (a
  // call, a collective, a barrier; not a posted all_reduce), by phase (RankStepTimes), rank
  // order. Where a step's time goes rank by rank: its own work, the runtime's path, the device,
  // and waiting for the slowest rank. Empty before the first step; UsageError without the option.
  std::vector<RankStepTimes> lastStepTimes();
  // Ends the workers and removes every shared-memory segment. Also runs at exit.
  void close();

 private:
  friend Session forkSession(const ForkOptions&, BackendRegistry, std::shared_ptr<ModelLoader>,
                             const NodeSpan&);
  explicit Session(std::shared_ptr<detail::SessionCore> core) : core_(std::move(core)) {}
  detail::SessionCore& core() const;
  std::shared_ptr<detail::SessionCore> core_;
};

// Forks the ranks with backends from `registry` and models from `loader`. Most programs call
// synk::fork() (synk/synk.h), which supplies the default registry and the plugin loader, and,
// under a launcher of several processes, the span over the nodes (node_span.h: each launcher
// forks its node's ranks; only node 0's returns, as the master).
// Throws UsageError when a session is already open in this process.
Session forkSession(const ForkOptions& options, BackendRegistry registry,
                    std::shared_ptr<ModelLoader> loader, const NodeSpan& span = {});

}  // namespace synk
