// The public handles (core/session.h): thin forwards to the session's core.
#include "synk/core/session.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "synk/core/backend.h"
#include "synk/core/error.h"
#include "synk/core/phase_clock.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/session_core.h"
#include "synk/core/shm_segment.h"

namespace synk {
namespace {

void closeAtExit() {
  if (detail::SessionLifecycle* open = detail::openSession()) open->close();
}

detail::SessionCore& coreOf(const std::shared_ptr<detail::SessionCore>& core, const char* what) {
  if (core) return *core;
  const std::string kind = what;
  if (kind == "session") throw UsageError("session: not forked: call synk::fork() first");
  const char* from = kind == "function" ? "Session::function"
                     : kind == "model"  ? "Session::load"
                                        : "Model::variable";
  throw UsageError(
      str("this ", kind, " handle is empty (default-constructed): get one from ", from));
}

// Plain arrays for a collective that reads Data: one new Data each, of the variable's dtype (a
// safe cast, as broadcast does), named after the variable for messages.
std::vector<Data> asData(Session& session, const std::vector<Variable>& vars,
                         const std::vector<ArrayView>& values, const char* what) {
  if (values.size() != vars.size()) {
    throw InvalidArgument(
        str(what, ": ", values.size(), " value(s) for ", vars.size(), " variable(s)"));
  }
  std::vector<Data> data;
  for (size_t k = 0; k < values.size(); ++k) {
    Data d = session.data(vars[k].dtype(), static_cast<int>(values[k].shape().size()),
                          {.name = vars[k].name()});
    d.setValue(values[k]);
    data.push_back(std::move(d));
  }
  return data;
}

// Over several nodes a backend with devices runs every collective natively (NCCL), one device per
// rank: its host-staged fallback for ranks sharing a device reduces through one node's shared
// memory. Two ranks of this node on one device are refused before anything forks.
void refuseSharedDevicesOnNode(const ForkOptions& options, const NodeSpan& span) {
  const int first = span.firstRank();
  for (int r = first; r < first + span.ranks_per_node; ++r) {
    for (int q = first; q < r; ++q) {
      if (options.devices[q] != options.devices[r]) continue;
      throw InvalidArgument(str(
          "fork: ranks ", q, " and ", r, " of node ", span.node, " would share ", options.backend,
          " device ", options.devices[r], ": over several nodes every collective is the ",
          "backend's native one, which needs a device per rank (host staging does not cross "
          "nodes): set ranks_per_node to at most the node's devices, or list distinct devices"));
    }
  }
}

}  // namespace

Session forkSession(const ForkOptions& requested, BackendRegistry registry,
                    std::shared_ptr<ModelLoader> loader, const NodeSpan& span) {
  detail::finishPendingTeardown();  // a failed session's abort and reaping, before forking again
  if (detail::SessionLifecycle* open = detail::openSession(); open && open->ownedHere()) {
    throw UsageError("fork: a session is already open in this process (close it first)");
  }
  if (gettid() != getpid()) {
    // A forked child holds only the calling thread: locks other threads held (malloc's, the
    // CUDA driver's) stay locked there forever.
    throw UsageError("fork: call it from the process's main thread, before starting threads");
  }
  initPhaseClock(requested.step_times);
  ForkOptions options = requested;
  BackendFactory* factory = registry.find(options.backend);
  if (!factory) {
    std::string known;
    for (const std::string& name : registry.names())
      known += str(known.empty() ? "" : ", ", name);
    throw InvalidArgument(
        str("fork: unknown backend '", options.backend, "' (known: ", known, ")"));
  }
  std::string why;
  if (!factory->isViable(&why)) {
    throw UsageError(str("fork: backend '", options.backend, "' cannot run here: ", why));
  }
  const int devices = factory->deviceCount();
  if (options.n_parallel == 0)
    options.n_parallel = span.several() ? span.nodes * span.ranks_per_node : devices;
  if (options.n_parallel < 1) {
    throw InvalidArgument(str("fork: n_parallel must be >= 1, got ", options.n_parallel));
  }
  if (span.several() && options.step_times) {
    throw UsageError(
        "fork: step_times over several nodes is not built yet (cluster/README.md): the times of "
        "other nodes' ranks do not travel; leave step_times off");
  }
  if (span.several() && options.n_parallel != span.nodes * span.ranks_per_node) {
    throw InvalidArgument(str("fork: n_parallel ", options.n_parallel, " but ", span.nodes,
                              " nodes x ", span.ranks_per_node, " ranks per node give ",
                              span.nodes * span.ranks_per_node));
  }
  // What one node holds: on several, each node's ranks use its devices alike.
  const int node_ranks = span.several() ? span.ranks_per_node : options.n_parallel;
  const bool host = !factory->bindsDevices();
  if (!options.devices.empty()) {
    if (static_cast<int>(options.devices.size()) != options.n_parallel) {
      throw InvalidArgument(str("fork: ", options.devices.size(), " devices listed for ",
                                options.n_parallel, " ranks"));
    }
    for (size_t r = 0; r < options.devices.size(); ++r) {
      const int d = options.devices[r];
      if (d < 0 || d >= devices) {
        throw InvalidArgument(str("fork: device ", d, " of rank ", r, " is not one of the ",
                                  devices, " ", options.backend, " devices"));
      }
    }
  } else if (!host) {
    if (span.first_device + node_ranks > devices) {
      throw InvalidArgument(
          span.first_device == 0
              ? str("fork: ", span.several() ? "ranks_per_node " : "n_parallel ", node_ranks,
                    " but only ", devices, " ", options.backend, " device(s) are visible")
              : str("fork: simulated node ", span.node, " would use ", options.backend, " devices ",
                    span.first_device, "-", span.first_device + node_ranks - 1,
                    " of this host, which has ", devices, ": ", span.nodes_on_host,
                    " simulated nodes x ", node_ranks, " ranks need a device each"));
    }
    for (int r = 0; r < options.n_parallel; ++r)
      // By local rank; other nodes' entries read as this node's numbering (a node's ranks are
      // compared only with each other: the cuda backend's check for a shared GPU).
      options.devices.push_back(span.first_device + r % node_ranks);
  }
  if (span.several() && !host) refuseSharedDevicesOnNode(options, span);
  factory->checkBeforeFork();
  sweepStaleSegments();
  auto core = std::make_shared<detail::SessionCore>(options, std::move(registry), std::move(loader),
                                                    *factory);
  core->lifecycle().start(span);
  // Registered after the backends started: exit handlers run in reverse order, so the session
  // closes before the CUDA runtime tears itself down.
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(closeAtExit); });
  return Session(std::move(core));
}

// ---- Session

Session::~Session() {
  close();
}

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    close();
    core_ = std::move(other.core_);
  }
  return *this;
}

detail::SessionCore& Session::core() const {
  return coreOf(core_, "session");
}
int Session::size() const {
  return core().lifecycle().size();
}
int Session::masterRank() const {
  return core().lifecycle().options().master_rank;
}
const std::string& Session::backend() const {
  return core().lifecycle().options().backend;
}
bool Session::closed() const {
  return !core_ || core_->lifecycle().closed();
}
std::vector<int> Session::pids() const {
  std::vector<int> out;
  detail::SessionLifecycle& life = core().lifecycle();
  for (int r = 0; r < life.size(); ++r)
    out.push_back(life.group().pidOf(r));
  return out;
}
Model Session::load(const std::string& plugin_path, const ModelOptions& options) {
  return core().models().load(plugin_path, options);
}
Function Session::function(const Model& model, const std::string& name,
                           const FunctionOptions& options) {
  if (!model.core_) throw InvalidArgument(str("function '", name, "': empty Model handle"));
  if (model.core_.get() != core_.get()) {
    throw InvalidArgument(str("function '", name, "': the model belongs to another session"));
  }
  return core().models().makeFunction(model.id_, name, options);
}
void Session::distribute() {
  core().models().distribute();
}
void Session::barrier() {
  core().sync().barrier();
}

void Session::synchronize() {
  core().sync().synchronize();
}
std::vector<RankStepTimes> Session::lastStepTimes() {
  return core().sync().lastStepTimes();
}
void Session::close() {
  if (core_) core_->lifecycle().close();
}

Data Session::data(DType dtype, int ndim, const DataOptions& options) {
  if (ndim < 0) throw InvalidArgument(str("data: ndim must be >= 0, got ", ndim));
  return core().data().makeData(dtype, Shape(static_cast<size_t>(ndim), 0), options);
}
Data Session::data(DType dtype, const Shape& shape, const DataOptions& options) {
  return core().data().makeData(dtype, shape, options);
}
Data Session::data(const ArrayView& value, const DataOptions& options) {
  Data d = core().data().makeData(value.dtype(), Shape(value.shape().size(), 0), options);
  d.setValue(value, options.force_cast, options.oversize);
  return d;
}

void Session::broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                        const CollectiveOptions& options) {
  core().collectives().broadcast(vars, values, core().collectives().resolveNative(options.native));
}
void Session::broadcast(const std::vector<Variable>& vars, const std::vector<Data>& values,
                        const CollectiveOptions& options) {
  std::vector<ArrayView> views;
  for (const Data& d : values)
    views.push_back(core().data().resolve(d, "broadcast").view());
  broadcast(vars, views, options);
}
void Session::broadcast(const std::vector<Variable>& vars, std::initializer_list<ArrayView> values,
                        const CollectiveOptions& options) {
  broadcast(vars, std::vector<ArrayView>(values), options);
}
void Session::scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
                      const Selection& batch) {
  core().collectives().scatter(vars, values, batch);
}
void Session::scatter(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                      const Selection& batch) {
  core().collectives().scatter(vars, asData(*this, vars, values, "scatter"), batch);
}
void Session::scatter(const std::vector<Variable>& vars, std::initializer_list<Data> values,
                      const Selection& batch) {
  core().collectives().scatter(vars, std::vector<Data>(values), batch);
}
std::vector<Array> Session::gather(const std::vector<Variable>& vars, int nd_up,
                                   const CollectiveOptions& options) {
  return core().collectives().gather(vars, nd_up,
                                     core().collectives().resolveNative(options.native));
}
void Session::allGather(const std::vector<Variable>& vars, const CollectiveOptions& options) {
  core().collectives().allGather(vars, core().collectives().resolveNative(options.native));
}
std::vector<Array> Session::reduce(const std::vector<Variable>& vars, ReduceOp op, bool in_place,
                                   const CollectiveOptions& options) {
  return core().collectives().reduce(vars, op, in_place,
                                     core().collectives().resolveNative(options.native));
}
void Session::allReduce(const std::vector<Variable>& vars, ReduceOp op,
                        const CollectiveOptions& options) {
  core().collectives().allReduce(vars, op, core().collectives().resolveNative(options.native));
}
void Session::setValue(int rank, const std::vector<Variable>& vars, const std::vector<Data>& values,
                       const Selection& batch) {
  core().collectives().setValue(rank, vars, values, batch);
}
void Session::setValue(int rank, const std::vector<Variable>& vars,
                       const std::vector<ArrayView>& values, const Selection& batch) {
  core().collectives().setValue(rank, vars, asData(*this, vars, values, "set_value"), batch);
}
void Session::setValue(int rank, const std::vector<Variable>& vars,
                       std::initializer_list<Data> values, const Selection& batch) {
  core().collectives().setValue(rank, vars, std::vector<Data>(values), batch);
}
std::vector<Array> Session::getValue(int rank, const std::vector<Variable>& vars) {
  return core().collectives().getValue(rank, vars);
}
std::vector<std::vector<int64_t>> Session::getLengths(const std::vector<Variable>& vars) {
  std::vector<std::vector<int64_t>> lengths;
  for (const auto& per_rank : core().collectives().getShapes(vars)) {
    auto& row = lengths.emplace_back();
    for (const Shape& shape : per_rank)
      row.push_back(shape.empty() ? 1 : shape[0]);
  }
  return lengths;
}
std::vector<std::vector<Shape>> Session::getShapes(const std::vector<Variable>& vars) {
  return core().collectives().getShapes(vars);
}

// ---- Model

const std::string& Model::name() const {
  return spec().name;
}
const std::string& Model::source() const {
  return coreOf(core_, "model").models().modelState(id_).path;
}
const ModelOptions& Model::options() const {
  return coreOf(core_, "model").models().modelState(id_).options;
}
const ModelSpec& Model::spec() const {
  return coreOf(core_, "model").models().modelState(id_).spec();
}
Variable Model::variable(const std::string& name) const {
  const ModelSpec& s = spec();
  for (size_t i = 0; i < s.variables.size(); ++i) {
    if (s.variables[i].name == name) return Variable(core_, id_, static_cast<uint32_t>(i));
  }
  std::string known;
  for (const VariableSpec& v : s.variables)
    known += str(known.empty() ? "" : ", ", v.name);
  throw InvalidArgument(str("model '", s.name, "' has no variable '", name,
                            "' (variables: ", known.empty() ? "none" : known, ")"));
}
std::vector<Variable> Model::variables() const {
  std::vector<Variable> out;
  for (size_t i = 0; i < spec().variables.size(); ++i) {
    out.push_back(Variable(core_, id_, static_cast<uint32_t>(i)));
  }
  return out;
}

// ---- Variable

const std::string& Variable::name() const {
  return coreOf(core_, "variable").models().variableSpec(model_, index_).name;
}
DType Variable::dtype() const {
  return coreOf(core_, "variable").models().variableSpec(model_, index_).dtype;
}
VariableKind Variable::kind() const {
  return coreOf(core_, "variable").models().variableSpec(model_, index_).kind;
}
Shape Variable::shape() const {
  return coreOf(core_, "variable").models().storage(model_, index_).shape;
}
Array Variable::getValue() const {
  detail::SessionCore& core = coreOf(core_, "variable");
  const VariableSpec& spec = core.models().variableSpec(model_, index_);
  if (spec.kind != VariableKind::RankLocal) return core.models().readLocalVariable(model_, index_);
  // A rank-local variable reads as the reduction of every rank's copy.
  const ReduceOp op = spec.local_reduction == LocalReduction::Mean ? ReduceOp::Avg : ReduceOp::Sum;
  return core.collectives()
      .reduce({*this}, op, false, core.collectives().resolveNative(std::nullopt))
      .at(0);
}
void Variable::setValue(const ArrayView& value, bool force_cast) {
  coreOf(core_, "variable").models().writeLocalVariable(model_, index_, value, force_cast);
}
void Variable::setValue(const Data& value, bool force_cast) {
  detail::SessionCore& core = coreOf(core_, "variable");
  core.models().writeLocalVariable(model_, index_, core.data().resolve(value, "set_value").view(),
                                   force_cast);
}

// ---- Function

const std::string& Function::name() const {
  return coreOf(core_, "function").models().functionSpec(id_).name;
}
std::vector<ReduceOp> Function::outputOps() const {
  return coreOf(core_, "function").models().binding(id_).output_ops;
}
std::vector<ReduceOp> Function::updateOps() const {
  return coreOf(core_, "function").models().binding(id_).update_ops;
}
std::vector<Array> Function::operator()(const std::vector<Data>& inputs,
                                        const CallOptions& options) const {
  return coreOf(core_, "function").calls().callFunction(id_, inputs, options);
}
std::vector<Array> Function::operator()(const std::vector<ArrayView>& inputs,
                                        const CallOptions& options) const {
  return (*this)(buildInputs(inputs), options);
}
std::vector<Array> Function::operator()(std::initializer_list<Data> inputs,
                                        const CallOptions& options) const {
  return (*this)(std::vector<Data>(inputs), options);
}
std::vector<Array> Function::asLocal(const std::vector<ArrayView>& inputs) const {
  return coreOf(core_, "function").localCall().run(id_, inputs);
}
std::vector<Data> Function::buildInputs(const std::vector<ArrayView>& values,
                                        const DataOptions& options) const {
  detail::SessionCore& core = coreOf(core_, "function");
  const FunctionSpec& spec = core.models().functionSpec(id_);
  if (values.size() != spec.inputs.size()) {
    throw InvalidArgument(str("build_inputs of function '", spec.name, "': ", values.size(),
                              " value(s) for ", spec.inputs.size(), " input(s)"));
  }
  std::vector<Data> out;
  for (size_t i = 0; i < values.size(); ++i) {
    DataOptions named = options;
    if (named.name.empty()) named.name = spec.inputs[i].name;
    Data d = core.data().makeData(spec.inputs[i].dtype, Shape(spec.inputs[i].ndim, 0), named);
    d.setValue(values[i], options.force_cast, options.oversize);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace synk
