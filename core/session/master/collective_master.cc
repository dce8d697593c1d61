// CollectiveMaster (collective_master.h): shared-variable collectives, the master's side:
// validate, then one step on every rank (step/collective_exec.cc runs it there).

#include "synk/core/session/master/collective_master.h"
#include "synk/core/error.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/session_core.h"
#include "synk/core/step/collective_request.h"

namespace synk::detail {
namespace {

void checkNotMirrored(ModelMaster& models, const CollectiveRequest& request, const char* why) {
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = models.variableSpec(ref.model, ref.index);
    if (spec.kind == VariableKind::Mirrored) {
      throw InvalidArgument(str(kindName(request.kind), " of mirrored variable '", spec.name,
                                "': ", why,
                                " (mirrored variables change only through broadcast "
                                "or all_reduce)"));
    }
  }
}

// Data sources of scatter / set_value: same dtype and ndim as the variable, batch in range. The
// caller ships them across nodes once its checks passed (DataMaster::shipSources).
std::vector<const DataImpl*> addSources(SessionCore& core, CollectiveRequest& request,
                                        const std::vector<Data>& values, const Selection& batch) {
  if (values.size() != request.vars.size()) {
    throw InvalidArgument(str(kindName(request.kind), ": ", values.size(), " value(s) for ",
                              request.vars.size(), " variable(s)"));
  }
  std::vector<const DataImpl*> sources;
  for (size_t k = 0; k < values.size(); ++k) {
    const VariableSpec& spec =
        core.models().variableSpec(request.vars[k].model, request.vars[k].index);
    const std::string where = str(kindName(request.kind), " of variable '", spec.name, "'");
    const DataImpl& d = core.data().resolve(values[k], where);
    if (d.dtype() != spec.dtype || d.ndim() != static_cast<int>(spec.shape.size())) {
      throw InvalidArgument(str(where, ": ", d.label(), " is ", dtypeName(d.dtype()), " with ndim ",
                                d.ndim(), ", the variable is ", dtypeName(spec.dtype),
                                " with ndim ", spec.shape.size()));
    }
    if (!batch.isAll()) {
      if (d.ndim() == 0) throw InvalidArgument(str(where, ": batch given for a scalar"));
      batch.check(d.shape()[0], [&] { return str(where, ": batch for ", d.label()); });
    }
    request.values.push_back({d.ref(), d.dtype(), d.shape(), 0});
    sources.push_back(&d);
  }
  request.batch = batch;
  return sources;
}

void checkRank(int size, int rank, const char* what) {
  if (rank < 0 || rank >= size) {
    throw InvalidArgument(str(what, ": rank ", rank, " is not a rank of ", size));
  }
}

}  // namespace

CollectiveRequest& CollectiveMaster::requestFor(CollectiveKind kind,
                                                const std::vector<Variable>& vars) {
  if (vars.empty()) throw InvalidArgument(str(kindName(kind), ": no variables given"));
  // One request, emptied and refilled: its vectors keep their capacity from step to step.
  CollectiveRequest& request = request_;
  request.kind = kind;
  request.vars.clear();
  request.op = ReduceOp::Sum;
  request.in_place = 0;
  request.nd_up = 1;
  request.shapes_known = 0;
  request.rank = 0;
  request.values.clear();
  request.batch = Selection();
  request.shapes.clear();
  // The runtime's own collectives (get_value, rank-local reads, ...) and the user's unless they
  // asked: native where the session has it.
  request.native = resolveNative(std::nullopt);
  for (const Variable& v : vars) {
    const auto [model, index] = core_.resolve(v, kindName(kind));
    request.vars.push_back({model, index});
  }
  return request;
}

bool CollectiveMaster::resolveNative(std::optional<bool> requested) {
  core_.lifecycle().ensureOpen();
  const char* unavailable = core_.lifecycle().backend().nativeUnavailable();
  if (!requested.has_value()) return unavailable == nullptr;
  if (*requested && unavailable != nullptr) throw UsageError(unavailable);
  // A backend without host staging (cuda across nodes) refuses it here, on the master's own
  // backend, before any rank steps (refused inside a step, it would end the session).
  if (!*requested) core_.lifecycle().backend().communicator(false);
  return *requested;
}

// The fast path: when the master knows every rank's shape of every variable, the ranks skip the
// shape exchange (a barrier and its bookkeeping: about a fifth of a small collective's cost).
void CollectiveMaster::useKnownShapes(CollectiveRequest& request) {
  request.shapes.resize(request.vars.size());
  const int rank = core_.lifecycle().group().rank();
  for (size_t k = 0; k < request.vars.size(); ++k) {
    if (!uniform_shapes_.known(request.vars[k].model, request.vars[k].index, rank,
                               table_.shapeGeneration(), request.shapes[k])) {
      request.shapes.clear();
      return;
    }
  }
  request.shapes_known = 1;
}

StepResult CollectiveMaster::runCollective(const CollectiveRequest& request) {
  core_.models().distribute();  // collectives need the variables on every rank
  // Both reused: a collective may be issued thousands of times a second.
  ByteWriter& payload = payload_;
  payload.clear();
  payload.write(request);
  std::string& what = what_;
  what = kindName(request.kind);
  what += " of '";
  what += core_.models().variableSpec(request.vars[0].model, request.vars[0].index).name;
  what += "'";
  if (request.vars.size() > 1) {
    what += " and ";
    what += std::to_string(request.vars.size() - 1);
    what += " more";
  }
  // An all_reduce on shapes the master knew can fail only fatally on a rank (its checks pass by
  // construction, its work is queued on the device): posted, so the master returns once its own
  // share is issued and the ranks meet again at the next step (core/step/step_runner.h).
  const bool post = request.kind == CollectiveKind::AllReduce && request.shapes_known != 0;
  return core_.lifecycle().runStep(Opcode::Collective, payload, what, post);
}

void CollectiveMaster::broadcast(const std::vector<Variable>& vars,
                                 const std::vector<ArrayView>& values, bool native) {
  CollectiveRequest& request = requestFor(CollectiveKind::Broadcast, vars);
  if (!values.empty() && values.size() != vars.size()) {
    throw InvalidArgument(
        str("broadcast: ", values.size(), " value(s) for ", vars.size(), " variable(s)"));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    core_.models().setStorage(request.vars[k].model, request.vars[k].index, values[k], false);
  }
  for (const VarRef& ref : request.vars)
    request.shapes.push_back(core_.models().storage(ref.model, ref.index).shape);
  request.native = native;
  runCollective(request);
}

void CollectiveMaster::scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
                               const Selection& batch) {
  CollectiveRequest& request = requestFor(CollectiveKind::Scatter, vars);
  checkNotMirrored(core_.models(), request, "scattering gives each rank different rows");
  const std::vector<const DataImpl*> sources = addSources(core_, request, values, batch);
  for (size_t k = 0; k < request.values.size(); ++k) {
    if (request.values[k].shape.empty()) {
      throw InvalidArgument(
          str("scatter of variable '",
              core_.models().variableSpec(request.vars[k].model, request.vars[k].index).name,
              "': a scalar cannot be scattered"));
    }
  }
  // Several nodes: each node's copy of the rows its ranks take, before the step reads them.
  core_.data().shipSources(sources, batch, -1);
  runCollective(request);
}

std::vector<Array> CollectiveMaster::gather(const std::vector<Variable>& vars, int nd_up,
                                            bool native) {
  if (nd_up != 0 && nd_up != 1) {
    throw InvalidArgument(str("gather: nd_up must be 0 (concatenate) or 1 (stack), got ", nd_up));
  }
  CollectiveRequest& request = requestFor(CollectiveKind::Gather, vars);
  request.nd_up = nd_up;
  request.native = native;
  useKnownShapes(request);
  return runCollective(request).arrays;
}

void CollectiveMaster::allGather(const std::vector<Variable>& vars, bool native) {
  CollectiveRequest& request = requestFor(CollectiveKind::AllGather, vars);
  request.native = native;
  runCollective(request);
}

std::vector<Array> CollectiveMaster::reduce(const std::vector<Variable>& vars, ReduceOp op,
                                            bool in_place, bool native) {
  CollectiveRequest& request = requestFor(CollectiveKind::Reduce, vars);
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = core_.models().variableSpec(ref.model, ref.index);
    if (!isCollectiveOp(op, spec.dtype)) {
      checkCollectiveOp(op, spec.dtype, str("reduce of variable '", spec.name, "'"));
    }
  }
  if (in_place)
    checkNotMirrored(core_.models(), request, "an in-place reduce changes only the master's copy");
  request.op = op;
  request.in_place = in_place;
  request.native = native;
  useKnownShapes(request);
  return runCollective(request).arrays;
}

void CollectiveMaster::allReduce(const std::vector<Variable>& vars, ReduceOp op, bool native) {
  CollectiveRequest& request = requestFor(CollectiveKind::AllReduce, vars);
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = core_.models().variableSpec(ref.model, ref.index);
    if (!isCollectiveOp(op, spec.dtype)) {
      checkCollectiveOp(op, spec.dtype, str("all_reduce of variable '", spec.name, "'"));
    }
  }
  request.op = op;
  request.native = native;
  useKnownShapes(request);
  runCollective(request);
}

void CollectiveMaster::setValue(int rank, const std::vector<Variable>& vars,
                                const std::vector<Data>& values, const Selection& batch) {
  checkRank(core_.lifecycle().size(), rank, "set_value");
  CollectiveRequest& request = requestFor(CollectiveKind::SetValue, vars);
  checkNotMirrored(core_.models(), request, "setting one rank's copy breaks the mirror");
  const std::vector<const DataImpl*> sources = addSources(core_, request, values, batch);
  request.rank = rank;
  core_.data().shipSources(sources, batch, rank);  // several nodes: to `rank`'s node alone
  runCollective(request);
}

std::vector<Array> CollectiveMaster::getValue(int rank, const std::vector<Variable>& vars) {
  checkRank(core_.lifecycle().size(), rank, "get_value");
  CollectiveRequest& request = requestFor(CollectiveKind::GetValue, vars);
  request.rank = rank;
  return runCollective(request).arrays;
}

std::vector<std::vector<Shape>> CollectiveMaster::getShapes(const std::vector<Variable>& vars) {
  return runCollective(requestFor(CollectiveKind::Shapes, vars)).shapes;
}

}  // namespace synk::detail
