#include "synk/core/step/distribute.h"

#include "synk/core/error.h"
#include "synk/core/process_group.h"

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
  out.put<uint64_t>(spec.functions.size());
  for (const FunctionSpec& f : spec.functions) {
    out.putString(f.name);
    tensors(f.inputs);
    tensors(f.outputs);
    out.write(f.reads);
    out.write(f.updates);
  }
  return std::vector<std::byte>(out.data(), out.data() + out.size());
}

}  // namespace

DistributeRequest distributeRequest(ModelTable& table, const std::vector<uint32_t>& models,
                                    const std::vector<uint32_t>& functions) {
  DistributeRequest request;
  for (uint32_t id : models) {
    const ModelState& m = table.models()[id];
    DistributedModel& d = request.models.emplace_back();
    d.id = id;
    d.path = m.path;
    d.options = m.options;
    d.signature = specSignature(m.spec());
    for (const VariableStorage& var : m.variables)
      d.shapes.push_back(var.shape);
  }
  for (uint32_t id : functions)
    request.functions.push_back(table.functions()[id]);
  return request;
}

void DistributeHandler::install(const DistributeRequest& request) {
  std::vector<ModelState>& models = table_.models();
  for (const DistributedModel& d : request.models) {
    if (models.size() <= d.id) models.resize(d.id + 1);
    ModelState& state = models[d.id];
    state.id = d.id;
    state.path = d.path;
    state.options = d.options;
    state.model = loader_.load(d.path, d.options);
    if (specSignature(state.spec()) != d.signature) {
      // Each rank loads the file itself: it may have been replaced since the master loaded it.
      throw PluginError(str("model '", d.path, "' on rank ", rank_.rank, " ('", state.spec().name,
                            "', ", state.spec().variables.size(), " variables, ",
                            state.spec().functions.size(),
                            " functions) declares other variables or functions than the "
                            "master's copy (was the file replaced?)"));
    }
    state.instance =
        state.model->instantiate(RankInfo{rank_.rank, rank_.size, rank_.device, &collectives_});
    for (size_t v = 0; v < state.spec().variables.size(); ++v) {
      VariableStorage storage;
      storage.dtype = state.spec().variables[v].dtype;
      table_.reshape(storage, d.shapes.at(v));
      state.variables.push_back(std::move(storage));
    }
  }
  std::vector<FunctionBinding>& functions = table_.functions();
  for (const FunctionBinding& b : request.functions) {
    if (functions.size() <= b.id) functions.resize(b.id + 1);
    functions[b.id] = b;
  }
  table_.functionsChanged();
}

StepResult DistributeHandler::run(ByteReader& payload, Waiter& waiter) {
  const size_t models_before = table_.models().size();
  const size_t functions_before = table_.functions().size();
  DistributeRequest request;
  StepResult result;
  try {
    payload.read(request);
    if (!rank_.isMaster()) install(request);
  } catch (const std::exception& e) {
    result.status = Status::fromException(e);
  }
  if (!rank_.barrier().arrive(waiter, BarrierSite::Agree, result.status.ok())) {
    if (!rank_.isMaster()) {  // undo, so a later distribute starts from the same state everywhere
      table_.models().resize(models_before);
      table_.functions().resize(functions_before);
      table_.functionsChanged();
    }
    return result;
  }
  // Every rank starts from the master's values (Synkhronos pickled them; we broadcast).
  for (const DistributedModel& d : request.models) {
    for (VariableStorage& var : table_.models()[d.id].variables) {
      BroadcastArgs args;
      args.buffer = var.buffer.data();
      args.count = static_cast<size_t>(numElements(var.shape));
      args.dtype = var.dtype;
      args.root = rank_.master_rank;
      rank_.default_communicator->broadcast(args, waiter);
    }
  }
  return result;
}

}  // namespace synk::detail
