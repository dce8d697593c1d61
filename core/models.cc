// Models, function bindings, distribute, and each rank's variable storage.
#include <algorithm>

#include "core/data_impl.h"
#include "core/error.h"
#include "core/exchange.h"
#include "core/host_kernels.h"
#include "core/session_core.h"

namespace synk {

const char* variableKindName(VariableKind kind) {
  switch (kind) {
    case VariableKind::Plain:
      return "plain";
    case VariableKind::Mirrored:
      return "mirrored";
    case VariableKind::RankLocal:
      return "rank_local";
  }
  return "unknown";
}

}  // namespace synk

namespace synk::detail {
namespace {

// What ranks must agree on about a model: its variables (name, dtype, ndim, kind) and functions
// (name, inputs, outputs, reads, updates). Initial values and shapes travel separately.
std::vector<std::byte> specSignature(const ModelSpec& spec) {
  ByteWriter out;
  out.putString(spec.name);
  out.put<uint64_t>(spec.variables.size());
  for (const VariableSpec& v : spec.variables) {
    out.putString(v.name);
    out.put(v.dtype);
    out.put<uint64_t>(v.shape.size());
    out.put(v.kind);
    out.put(v.local_reduction);
  }
  auto tensors = [&](const std::vector<TensorSpec>& list) {
    out.put<uint64_t>(list.size());
    for (const TensorSpec& t : list) {
      out.putString(t.name);
      out.put(t.dtype);
      out.put(t.ndim);
    }
  };
  auto names = [&](const std::vector<std::string>& list) {
    out.put<uint64_t>(list.size());
    for (const std::string& name : list)
      out.putString(name);
  };
  out.put<uint64_t>(spec.functions.size());
  for (const FunctionSpec& f : spec.functions) {
    out.putString(f.name);
    tensors(f.inputs);
    tensors(f.outputs);
    names(f.reads);
    names(f.updates);
  }
  return std::vector<std::byte>(out.data(), out.data() + out.size());
}

template <typename Spec>
std::string listNames(const std::vector<Spec>& specs) {
  std::string out;
  for (const auto& spec : specs)
    out += str(out.empty() ? "" : ", ", spec.name);
  return out.empty() ? "none" : out;
}

int indexOf(const std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

template <typename Spec>
int indexOfSpec(const std::vector<Spec>& specs, const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

bool FunctionBinding::hasScatteredInputs() const {
  return std::find(broadcast.begin(), broadcast.end(), 0) != broadcast.end();
}

bool FunctionBinding::hasSliceableReads() const {
  return std::find(sliceable.begin(), sliceable.end(), 1) != sliceable.end();
}

void FunctionBinding::write(ByteWriter& out) const {
  out.put(id);
  out.put(model);
  out.put(index);
  out.putVector(broadcast);
  out.putVector(output_ops);
  out.putVector(update_ops);
  out.putVector(sliceable);
  out.putVector(update_vars);
  out.putVector(read_vars);
}

FunctionBinding FunctionBinding::read(ByteReader& in) {
  FunctionBinding b;
  b.id = in.get<uint32_t>();
  b.model = in.get<uint32_t>();
  b.index = in.get<uint32_t>();
  b.broadcast = in.getVector<uint8_t>();
  b.output_ops = in.getVector<ReduceOp>();
  b.update_ops = in.getVector<ReduceOp>();
  b.sliceable = in.getVector<uint8_t>();
  b.update_vars = in.getVector<int32_t>();
  b.read_vars = in.getVector<int32_t>();
  return b;
}

ModelState& SessionCore::modelState(uint32_t id) {
  if (closed_) throwClosed();  // handles outlive the session; its models do not
  SYNK_CHECK(id < models_.size(), "no model ", id);
  ModelState& model = models_[id];
  if (!model.dropped.empty()) throw UsageError(model.dropped);
  SYNK_CHECK(model.model, "no model ", id);
  return model;
}

const FunctionBinding& SessionCore::binding(uint32_t id) {
  if (closed_) throwClosed();
  SYNK_CHECK(id < functions_.size(), "no function ", id);
  const FunctionBinding& b = functions_[id];
  if (!b.dropped.empty()) throw UsageError(b.dropped);
  return b;
}

const FunctionSpec& SessionCore::functionSpec(uint32_t id) {
  const FunctionBinding& b = binding(id);
  return modelState(b.model).spec().functions[b.index];
}

VariableStorage& SessionCore::storage(uint32_t model, uint32_t index) {
  ModelState& m = modelState(model);
  SYNK_CHECK(index < m.variables.size(), "no variable ", index, " in model ", model);
  return m.variables[index];
}

const VariableSpec& SessionCore::variableSpec(uint32_t model, uint32_t index) {
  return modelState(model).spec().variables.at(index);
}

void SessionCore::reshapeStorage(VariableStorage& storage, const Shape& shape) {
  if (storage.shape != shape) ++shape_generation_;
  storage.shape = shape;
  storage.buffer.reserve(device(), std::max<size_t>(storage.bytes(), 1));
}

Model SessionCore::load(const std::string& path, const ModelOptions& options) {
  ensureOpen();
  std::shared_ptr<LoadedModel> model = loader_->load(path, options);
  ModelState state;
  state.id = static_cast<uint32_t>(models_.size());
  state.path = model->source();  // the file found: every rank loads exactly this one
  state.options = options;
  state.model = model;
  state.instance = model->instantiate(RankInfo{rank(), size(), &device(), &call_collectives_});
  for (const VariableSpec& spec : model->spec().variables) {
    VariableStorage storage;
    storage.dtype = spec.dtype;
    reshapeStorage(storage, spec.shape);
    if (spec.initial.empty()) {
      device().fillIdentity(storage.buffer.data(), numElements(spec.shape), spec.dtype,
                            ReduceOp::Sum);
    } else {
      device().copy(storage.buffer.data(), spec.initial.data(), storage.bytes(),
                    CopyKind::HostToDevice);
    }
    state.variables.push_back(std::move(storage));
  }
  synchronizeOutsideStep("loading a model");
  models_.push_back(std::move(state));
  return Model(shared_from_this(), models_.back().id);
}

Function SessionCore::makeFunction(const Model& model, const std::string& name,
                                   const FunctionOptions& options) {
  ensureOpen();
  const ModelSpec& mspec = modelState(model.id_).spec();
  const int fn_index = indexOfSpec(mspec.functions, name);
  if (fn_index < 0) {
    throw InvalidArgument(str("model '", mspec.name, "' has no function '", name,
                              "' (functions: ", listNames(mspec.functions), ")"));
  }
  const FunctionSpec& spec = mspec.functions[fn_index];
  const std::string where = str("function '", spec.name, "'");
  FunctionBinding b;
  b.id = static_cast<uint32_t>(functions_.size());
  b.model = model.id_;
  b.index = static_cast<uint32_t>(fn_index);
  b.broadcast.assign(spec.inputs.size(), 0);
  for (const std::string& input : options.broadcast) {
    const int i = indexOfSpec(spec.inputs, input);
    if (i < 0) {
      throw InvalidArgument(str(where, ": broadcast names '", input, "', which is not an input (",
                                "inputs: ", listNames(spec.inputs), ")"));
    }
    b.broadcast[i] = 1;
  }
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (!b.broadcast[i] && spec.inputs[i].ndim == 0) {
      throw InvalidArgument(str(where, ": input '", spec.inputs[i].name,
                                "' is a scalar and cannot be scattered; list it in broadcast"));
    }
  }
  // The default op works for every dtype: avg for floating point, sum for integers (a count of
  // rows or of correct answers sums to the one-process count; avg cannot reduce integers).
  for (const TensorSpec& out : spec.outputs)
    b.output_ops.push_back(isFloating(out.dtype) ? ReduceOp::Avg : ReduceOp::Sum);
  for (const auto& [output, op_name] : options.outputs) {
    const int i = indexOfSpec(spec.outputs, output);
    if (i < 0) {
      throw InvalidArgument(str(where, ": outputs names '", output, "', which is not an output (",
                                "outputs: ", listNames(spec.outputs), ")"));
    }
    b.output_ops[i] = parseReduceOp(op_name, str(where, " output '", output, "'"));
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    if (b.output_ops[i] == ReduceOp::Avg && !isFloating(spec.outputs[i].dtype)) {
      throw InvalidArgument(str(where, ": output '", spec.outputs[i].name, "' is ",
                                dtypeName(spec.outputs[i].dtype),
                                ": 'avg' needs a floating-point dtype (give it another op, "
                                "e.g. sum, the default for integers)"));
    }
  }
  for (const std::string& var : spec.updates) {
    b.update_vars.push_back(indexOfSpec(mspec.variables, var));
  }
  for (const std::string& var : spec.reads)
    b.read_vars.push_back(indexOfSpec(mspec.variables, var));
  b.update_ops.assign(spec.updates.size(), ReduceOp::Avg);
  for (const auto& [var, op_name] : options.updates) {
    const int i = indexOf(spec.updates, var);
    if (i < 0) {
      throw InvalidArgument(str(where, ": updates names '", var, "', which it does not update"));
    }
    b.update_ops[i] = parseReduceOp(op_name, str(where, " update of '", var, "'"));
  }
  for (size_t i = 0; i < spec.updates.size(); ++i) {
    const VariableSpec& var = mspec.variables[b.update_vars[i]];
    // The op only combines the slices of a sliced call, so the default (avg) on an integer
    // variable is refused only when such a call comes (call.cc); an explicit one right here.
    if (options.updates.count(var.name)) {
      checkCollectiveOp(b.update_ops[i], var.dtype, str(where, " update of '", var.name, "'"));
    }
    if (var.kind == VariableKind::Mirrored) {
      throw InvalidArgument(str(where, " updates mirrored variable '", var.name,
                                "': a mirrored variable changes only through broadcast or "
                                "all_reduce (declare it plain or rank_local)"));
    }
  }
  b.sliceable.assign(spec.reads.size(), 0);
  for (const std::string& var : options.sliceable) {
    const int i = indexOf(spec.reads, var);
    if (i < 0) {
      throw InvalidArgument(str(where, ": sliceable names '", var, "', which it does not read"));
    }
    if (mspec.variables[b.read_vars[i]].shape.empty()) {
      throw InvalidArgument(str(where, ": sliceable variable '", var, "' is a scalar"));
    }
    b.sliceable[i] = 1;
  }
  b.what = str("call of function '", spec.name, "'");
  functions_.push_back(std::move(b));
  scratch_.resize(functions_.size());
  return Function(shared_from_this(), functions_.back().id);
}

void SessionCore::distribute() {
  ensureOpen();
  // One step per new model: a model whose creation fails on some rank is dropped alone, and the
  // session goes on with the others (one failed model used to fail every later distribute).
  std::string failure;
  for (size_t id = 0; id < models_.size(); ++id) {
    ModelState& m = models_[id];
    if (m.distributed || !m.dropped.empty()) continue;
    try {
      runDistribute({static_cast<uint32_t>(id)}, {});
    } catch (const std::exception& e) {
      if (closed_) throw;  // fatal: the session is gone, nothing to drop
      const std::string name = m.spec().name;
      dropModel(static_cast<uint32_t>(id), e.what());
      if (failure.empty()) {
        failure = str("distribute: model '", name, "' could not be created on every rank and was ",
                      "dropped (the session goes on without it): ", e.what());
      }
    }
  }
  std::vector<uint32_t> new_functions;
  for (const FunctionBinding& f : functions_) {
    if (!f.distributed && f.dropped.empty()) new_functions.push_back(f.id);
  }
  if (!new_functions.empty()) runDistribute({}, new_functions);
  if (!failure.empty()) throw PluginError(failure);
}

void SessionCore::dropModel(uint32_t id, const std::string& why) {
  ModelState& m = models_[id];
  const std::string dropped =
      str("model '", m.spec().name, "' (", m.path, ") was dropped: creating it failed: ", why);
  for (FunctionBinding& f : functions_) {
    if (f.model == id && f.dropped.empty()) {
      f.dropped = str("function '", m.spec().functions[f.index].name, "': ", dropped);
    }
  }
  m.instance.reset();
  m.variables.clear();
  m.dropped = dropped;
}

void SessionCore::runDistribute(const std::vector<uint32_t>& new_models,
                                const std::vector<uint32_t>& new_functions) {
  ByteWriter payload;
  payload.put<uint64_t>(new_models.size());
  for (uint32_t id : new_models) {
    payload.put(id);
    payload.putString(models_[id].path);
    payload.put<uint64_t>(models_[id].options.size());
    for (const auto& [key, value] : models_[id].options) {
      payload.putString(key);
      payload.putString(value);
    }
    payload.putVector(specSignature(models_[id].spec()));
    for (const VariableStorage& var : models_[id].variables)
      payload.putVector(var.shape);
  }
  payload.put<uint64_t>(new_functions.size());
  for (uint32_t id : new_functions)
    functions_[id].write(payload);
  runCommand(Opcode::Distribute, payload, "distribute");
  for (uint32_t id : new_models)
    models_[id].distributed = true;
  for (uint32_t id : new_functions)
    functions_[id].distributed = true;
}

Status SessionCore::executeDistribute(ByteReader& in, Waiter& waiter) {
  const size_t models_before = models_.size();
  const size_t functions_before = functions_.size();
  std::vector<uint32_t> new_models;
  Status status;
  try {
    const auto n_models = in.get<uint64_t>();
    for (uint64_t k = 0; k < n_models; ++k) {
      const auto id = in.get<uint32_t>();
      const std::string path = in.getString();
      ModelOptions options;
      const auto n_options = in.get<uint64_t>();
      for (uint64_t o = 0; o < n_options; ++o) {
        std::string key = in.getString();
        options[key] = in.getString();
      }
      const std::vector<std::byte> master_signature = in.getVector<std::byte>();
      new_models.push_back(id);
      if (isMaster()) {
        for (size_t v = 0; v < models_[id].variables.size(); ++v)
          in.getVector<int64_t>();
        continue;
      }
      if (models_.size() <= id) models_.resize(id + 1);
      ModelState& state = models_[id];
      state.id = id;
      state.path = path;
      state.options = options;
      state.model = loader_->load(path, options);
      if (specSignature(state.spec()) != master_signature) {
        // Each rank loads the file itself: it may have been replaced since the master loaded it.
        throw PluginError(str("model '", path, "' on rank ", rank(), " ('", state.spec().name,
                              "', ", state.spec().variables.size(), " variables, ",
                              state.spec().functions.size(),
                              " functions) declares other variables or functions than the "
                              "master's copy (was the file replaced?)"));
      }
      state.instance =
          state.model->instantiate(RankInfo{rank(), size(), &device(), &call_collectives_});
      for (const VariableSpec& spec : state.spec().variables) {
        VariableStorage storage;
        storage.dtype = spec.dtype;
        reshapeStorage(storage, in.getVector<int64_t>());
        state.variables.push_back(std::move(storage));
      }
    }
    const auto n_bindings = in.get<uint64_t>();
    for (uint64_t k = 0; k < n_bindings; ++k) {
      FunctionBinding b = FunctionBinding::read(in);
      if (isMaster()) continue;
      if (functions_.size() <= b.id) functions_.resize(b.id + 1);
      functions_[b.id] = std::move(b);
    }
    scratch_.resize(functions_.size());
  } catch (const std::exception& e) {
    status = Status::fromException(e);
  }
  if (!group_->barrier().arrive(waiter, BarrierSite::Agree, status.ok())) {
    if (!isMaster()) {  // undo, so a later distribute starts from the same state everywhere
      models_.resize(models_before);
      functions_.resize(functions_before);
      scratch_.resize(functions_before);
    }
    return status;
  }
  // Every rank starts from the master's values (Synkhronos pickled them; we broadcast).
  Communicator& comm = defaultCommunicator();
  for (uint32_t id : new_models) {
    for (VariableStorage& var : models_[id].variables) {
      BroadcastArgs args;
      args.buffer = var.buffer.data();
      args.count = static_cast<size_t>(numElements(var.shape));
      args.dtype = var.dtype;
      args.root = masterRank();
      comm.broadcast(args, waiter);
    }
  }
  return status;
}

Array SessionCore::readLocalVariable(uint32_t model, uint32_t index) {
  ensureOpen();
  VariableStorage& var = storage(model, index);
  Array out(var.dtype, var.shape);
  device().copy(out.data(), var.buffer.data(), var.bytes(), CopyKind::DeviceToHost);
  synchronizeOutsideStep("reading a variable");
  return out;
}

void SessionCore::writeLocalVariable(uint32_t model, uint32_t index, const ArrayView& value,
                                     bool force_cast) {
  ensureOpen();
  const VariableSpec& spec = variableSpec(model, index);
  if (spec.kind == VariableKind::Mirrored && modelState(model).distributed) {
    throw UsageError(str("variable '", spec.name, "' is mirrored: after distribute it changes ",
                         "only through broadcast or all_reduce"));
  }
  setStorage(model, index, value, force_cast);
}

void SessionCore::setStorage(uint32_t model, uint32_t index, const ArrayView& value,
                             bool force_cast) {
  const VariableSpec& spec = variableSpec(model, index);
  const Array converted = conditionValue(value, spec.dtype, static_cast<int>(spec.shape.size()),
                                         force_cast, str("value of variable '", spec.name, "'"));
  VariableStorage& var = storage(model, index);
  reshapeStorage(var, converted.shape());
  device().copy(var.buffer.data(), converted.data(), var.bytes(), CopyKind::HostToDevice);
  synchronizeOutsideStep("writing a variable");
}

std::pair<uint32_t, uint32_t> SessionCore::resolve(const Variable& variable,
                                                   const std::string& what) {
  ensureOpen();
  if (!variable.core_) throw InvalidArgument(str(what, ": empty Variable handle"));
  if (variable.core_.get() != this) {
    throw InvalidArgument(
        str(what, ": variable '", variable.name(), "' belongs to another session"));
  }
  return {variable.model_, variable.index_};
}

const DataImpl& SessionCore::resolve(const Data& data, const std::string& what) {
  if (!data) throw InvalidArgument(str(what, ": empty Data handle"));
  const DataImpl& impl = data.impl();
  if (&impl.core() != this) {
    throw InvalidArgument(str(what, ": ", impl.label(), " belongs to another session"));
  }
  if (numElements(impl.shape()) > 0 && impl.allocElements() == 0) {
    throw InvalidArgument(str(what, ": ", impl.label(), " was freed"));
  }
  return impl;
}

}  // namespace synk::detail
