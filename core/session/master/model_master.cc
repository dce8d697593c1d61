// ModelMaster (model_master.h): models, function bindings, distribute and variables, the
// master's side.
#include <algorithm>

#include "synk/core/error.h"
#include "synk/core/session/master/model_master.h"
#include "synk/core/session/session_core.h"

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

ModelState& ModelMaster::modelState(uint32_t id) {
  if (core_.lifecycle().closed())
    core_.lifecycle().throwClosed();  // handles outlive the session; its models do not
  return table_.model(id);
}

const FunctionBinding& ModelMaster::binding(uint32_t id) {
  if (core_.lifecycle().closed()) core_.lifecycle().throwClosed();
  return table_.binding(id);
}

const FunctionSpec& ModelMaster::functionSpec(uint32_t id) {
  if (core_.lifecycle().closed()) core_.lifecycle().throwClosed();
  return table_.functionSpec(id);
}

VariableStorage& ModelMaster::storage(uint32_t model, uint32_t index) {
  if (core_.lifecycle().closed()) core_.lifecycle().throwClosed();
  return table_.storage(model, index);
}

const VariableSpec& ModelMaster::variableSpec(uint32_t model, uint32_t index) {
  if (core_.lifecycle().closed()) core_.lifecycle().throwClosed();
  return table_.variableSpec(model, index);
}

Model ModelMaster::load(const std::string& path, const ModelOptions& options) {
  core_.lifecycle().ensureOpen();
  std::shared_ptr<LoadedModel> model = loader_.load(path, options);
  std::vector<ModelState>& models = table_.models();
  ModelState state;
  state.id = static_cast<uint32_t>(models.size());
  state.path = model->source();  // the file found: every rank loads exactly this one
  state.options = options;
  state.model = model;
  Device& device = *rank_.device;
  state.instance = model->instantiate(
      RankInfo{rank_.rank, core_.lifecycle().size(), &device, &call_collectives_});
  for (const VariableSpec& spec : model->spec().variables) {
    VariableStorage storage;
    storage.dtype = spec.dtype;
    table_.reshape(storage, spec.shape);
    if (spec.initial.empty()) {
      device.fillIdentity(storage.buffer.data(), numElements(spec.shape), spec.dtype,
                          ReduceOp::Sum);
    } else {
      device.copy(storage.buffer.data(), spec.initial.data(), storage.bytes(),
                  CopyKind::HostToDevice);
    }
    state.variables.push_back(std::move(storage));
  }
  core_.lifecycle().synchronizeOutsideStep("loading a model");
  models.push_back(std::move(state));
  return core_.modelHandle(models.back().id);
}

Function ModelMaster::makeFunction(uint32_t model, const std::string& name,
                                   const FunctionOptions& options) {
  core_.lifecycle().ensureOpen();
  const ModelSpec& mspec = modelState(model).spec();
  const int fn_index = indexOfSpec(mspec.functions, name);
  if (fn_index < 0) {
    throw InvalidArgument(str("model '", mspec.name, "' has no function '", name,
                              "' (functions: ", listNames(mspec.functions), ")"));
  }
  const FunctionSpec& spec = mspec.functions[fn_index];
  const std::string where = str("function '", spec.name, "'");
  FunctionBinding b;
  b.id = static_cast<uint32_t>(table_.functions().size());
  b.model = model;
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
  table_.functions().push_back(std::move(b));
  table_.functionsChanged();
  return core_.functionHandle(table_.functions().back().id);
}

void ModelMaster::distribute() {
  core_.lifecycle().ensureOpen();
  // One step per new model: a model whose creation fails on some rank is dropped alone, and the
  // session goes on with the others (one failed model used to fail every later distribute).
  std::string failure;
  for (size_t id = 0; id < table_.models().size(); ++id) {
    ModelState& m = table_.models()[id];
    if (m.distributed || !m.dropped.empty()) continue;
    try {
      runDistribute({static_cast<uint32_t>(id)}, {});
    } catch (const std::exception& e) {
      if (core_.lifecycle().closed()) throw;  // fatal: the session is gone, nothing to drop
      const std::string name = m.spec().name;
      table_.drop(static_cast<uint32_t>(id), e.what());
      if (failure.empty()) {
        failure = str("distribute: model '", name, "' could not be created on every rank and was ",
                      "dropped (the session goes on without it): ", e.what());
      }
    }
  }
  std::vector<uint32_t> new_functions;
  for (const FunctionBinding& f : table_.functions()) {
    if (!f.distributed && f.dropped.empty()) new_functions.push_back(f.id);
  }
  if (!new_functions.empty()) runDistribute({}, new_functions);
  if (!failure.empty()) throw PluginError(failure);
}

void ModelMaster::runDistribute(const std::vector<uint32_t>& new_models,
                                const std::vector<uint32_t>& new_functions) {
  ByteWriter payload;
  payload.write(distributeRequest(table_, new_models, new_functions));
  core_.lifecycle().runStep(Opcode::Distribute, payload, "distribute");
  for (uint32_t id : new_models)
    table_.models()[id].distributed = true;
  for (uint32_t id : new_functions)
    table_.functions()[id].distributed = true;
}

Array ModelMaster::readLocalVariable(uint32_t model, uint32_t index) {
  core_.lifecycle().ensureOpen();
  VariableStorage& var = storage(model, index);
  Array out(var.dtype, var.shape);
  rank_.device->copy(out.data(), var.buffer.data(), var.bytes(), CopyKind::DeviceToHost);
  core_.lifecycle().synchronizeOutsideStep("reading a variable");
  return out;
}

void ModelMaster::writeLocalVariable(uint32_t model, uint32_t index, const ArrayView& value,
                                     bool force_cast) {
  core_.lifecycle().ensureOpen();
  const VariableSpec& spec = variableSpec(model, index);
  if (spec.kind == VariableKind::Mirrored && modelState(model).distributed) {
    throw UsageError(str("variable '", spec.name, "' is mirrored: after distribute it changes ",
                         "only through broadcast or all_reduce"));
  }
  setStorage(model, index, value, force_cast);
}

void ModelMaster::setStorage(uint32_t model, uint32_t index, const ArrayView& value,
                             bool force_cast) {
  const VariableSpec& spec = variableSpec(model, index);
  const Array converted = conditionValue(value, spec.dtype, static_cast<int>(spec.shape.size()),
                                         force_cast, str("value of variable '", spec.name, "'"));
  VariableStorage& var = storage(model, index);
  table_.reshape(var, converted.shape());
  rank_.device->copy(var.buffer.data(), converted.data(), var.bytes(), CopyKind::HostToDevice);
  core_.lifecycle().synchronizeOutsideStep("writing a variable");
}

}  // namespace synk::detail
