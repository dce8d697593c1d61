// Shared-variable collectives. The master validates and issues one step; every rank publishes
// its variables' shapes in one barrier exchange (the fingerprint: ranks may hold different
// shapes, and a collective on unequal shapes must be an exact result or a clear error, never
// silently wrong), then runs the backend's communicator.
#include <algorithm>
#include <cstring>

#include "core/call_request.h"
#include "core/data_impl.h"
#include "core/error.h"
#include "core/exchange.h"
#include "core/heap_buffer.h"
#include "core/session_core.h"

namespace synk::detail {
namespace {

enum class CollectiveKind : uint8_t {
  Broadcast,
  Scatter,
  Gather,
  AllGather,
  Reduce,
  AllReduce,
  SetValue,
  GetValue,
  Shapes
};

const char* kindName(CollectiveKind kind) {
  constexpr const char* kNames[] = {"broadcast",  "scatter",   "gather",    "all_gather", "reduce",
                                    "all_reduce", "set_value", "get_value", "get_shapes"};
  return kNames[static_cast<int>(kind)];
}

struct VarRef {
  uint32_t model;
  uint32_t index;
};

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::Shapes;
  std::vector<VarRef> vars;
  ReduceOp op = ReduceOp::Sum;
  uint8_t in_place = 0;
  int32_t nd_up = 1;
  uint8_t nccl = 1;
  // The master knows every rank holds shapes[k] (the fast path): no shape exchange.
  uint8_t shapes_known = 0;
  int32_t rank = 0;               // set_value / get_value target
  std::vector<CallInput> values;  // scatter / set_value sources
  Selection batch;
  std::vector<Shape> shapes;  // broadcast: the master's; shapes_known: every rank's

  void write(ByteWriter& out) const {
    out.put(kind);
    out.putVector(vars);
    out.put(op);
    out.put(in_place);
    out.put(nd_up);
    out.put(nccl);
    out.put(shapes_known);
    out.put(rank);
    out.put<uint64_t>(values.size());
    for (const CallInput& v : values)
      v.write(out);
    batch.write(out);
    out.put<uint64_t>(shapes.size());
    for (const Shape& s : shapes)
      out.putVector(s);
  }
  static CollectiveRequest read(ByteReader& in) {
    CollectiveRequest r;
    r.kind = in.get<CollectiveKind>();
    r.vars = in.getVector<VarRef>();
    r.op = in.get<ReduceOp>();
    r.in_place = in.get<uint8_t>();
    r.nd_up = in.get<int32_t>();
    r.nccl = in.get<uint8_t>();
    r.shapes_known = in.get<uint8_t>();
    r.rank = in.get<int32_t>();
    r.values.resize(in.get<uint64_t>());
    for (CallInput& v : r.values)
      v = CallInput::read(in);
    r.batch = Selection::read(in);
    r.shapes.resize(in.get<uint64_t>());
    for (Shape& s : r.shapes)
      s = in.getVector<int64_t>();
    return r;
  }
};

Shape trailing(const Shape& shape) {
  return Shape(shape.begin() + 1, shape.end());
}

}  // namespace

// ---- every rank

class CollectiveExecution {
 public:
  CollectiveExecution(SessionCore& core, CollectiveRequest request, Waiter& waiter)
      : core_(core), request_(std::move(request)), waiter_(waiter), device_(core.device()) {}

  Status run() {
    switch (request_.kind) {
      case CollectiveKind::Broadcast:
        return broadcast();
      case CollectiveKind::Scatter:
      case CollectiveKind::SetValue:
        // No barrier inside: a failure here is reported like bad input, the session goes on.
        try {
          return copyRows();
        } catch (const std::exception& e) {
          return Status::fromException(e);
        }
      default:
        return shaped();
    }
  }

 private:
  VariableStorage& var(size_t k) {
    return core_.storage(request_.vars[k].model, request_.vars[k].index);
  }
  std::string varName(size_t k) {
    return core_.variableSpec(request_.vars[k].model, request_.vars[k].index).name;
  }
  Communicator& comm() { return core_.communicator(request_.nccl != 0); }

  Status broadcast() {
    for (size_t k = 0; k < request_.vars.size(); ++k) {
      VariableStorage& v = var(k);
      if (v.shape != request_.shapes[k]) core_.reshapeStorage(v, request_.shapes[k]);
      BroadcastArgs args;
      args.buffer = v.buffer.data();
      args.count = static_cast<size_t>(numElements(v.shape));
      args.dtype = v.dtype;
      args.root = core_.masterRank();
      comm().broadcast(args, waiter_);
    }
    return {};
  }

  // scatter: every rank takes its share of the batch; set_value: the target takes the batch.
  Status copyRows() {
    const bool scatter = request_.kind == CollectiveKind::Scatter;
    if (!scatter && core_.rank() != request_.rank) return {};
    for (size_t k = 0; k < request_.vars.size(); ++k) {
      const CallInput& src = request_.values[k];
      const Selection& batch = request_.batch;
      const int64_t length = src.shape.empty() ? 1 : src.shape[0];
      const int64_t rows = src.shape.empty() ? 1 : batch.size(length);
      const RowRange mine =
          scatter ? splitRows(rows, core_.size(), core_.rank()) : RowRange{0, rows};
      Shape shape = src.shape;
      if (!shape.empty()) shape[0] = mine.size();
      VariableStorage& v = var(k);
      core_.reshapeStorage(v, shape);
      const size_t row_bytes = rowBytes(shape, src.dtype);
      const size_t bytes = static_cast<size_t>(mine.size()) * row_bytes;
      if (bytes == 0) continue;
      std::byte* base = core_.blobs().attach(src.blob);
      if (shape.empty() || batch.isContiguous()) {
        const int64_t first = shape.empty() ? 0 : batch.rowAt(mine.begin);
        device_.copy(v.buffer.data(), base + static_cast<size_t>(first) * row_bytes, bytes,
                     CopyKind::HostToDevice);
        // The step must not end while a copy still reads the Data (the master may rewrite it).
        device_.synchronize(waiter_);
        continue;
      }
      HeapBuffer staging;
      std::byte* gathered = static_cast<std::byte*>(v.buffer.data());
      if (!device_.isHost()) {
        staging.reserve(core_.heap(), bytes);
        gathered = static_cast<std::byte*>(staging.data());
      }
      for (int64_t p = 0; p < mine.size(); ++p) {
        std::memcpy(gathered + static_cast<size_t>(p) * row_bytes,
                    base + static_cast<size_t>(batch.rowAt(mine.begin + p)) * row_bytes, row_bytes);
      }
      if (!device_.isHost()) {
        device_.copy(v.buffer.data(), gathered, bytes, CopyKind::HostToDevice);
        device_.synchronize(waiter_);  // the staging buffer goes away
      }
    }
    return {};
  }

  // The collectives that need every rank's shapes first. Every shape is exchanged and checked
  // before any variable moves: a bad shape anywhere fails the whole call with nothing changed.
  Status shaped() {
    std::vector<std::vector<Shape>> shapes;
    if (request_.shapes_known) {
      knownShapes(shapes);
    } else if (Status ok = exchangeShapes(shapes); !ok.ok()) {
      return ok;
    }
    // Every rank checks the same shapes, so all return the same error before any collective.
    for (size_t k = 0; k < request_.vars.size(); ++k) {
      const Status ok = checkShapes(k, shapes[k]);
      if (!ok.ok()) return ok;
    }
    if (!request_.shapes_known && keepsShapes()) {
      for (size_t k = 0; k < request_.vars.size(); ++k) {
        const std::vector<Shape>& all = shapes[k];
        if (std::all_of(all.begin(), all.end(), [&](const Shape& s) { return s == all[0]; })) {
          core_.rememberUniformShape(request_.vars[k].model, request_.vars[k].index, all[0]);
        }
      }
    }
    std::vector<Array>& results = core_.results();
    for (size_t k = 0; k < request_.vars.size(); ++k)
      runOne(k, shapes[k], results);
    // Only results copied to the host need the device to finish; an all_reduce stays queued on
    // the device (stream-ordered before anything that reads the variable later).
    if (copied_to_host_) device_.synchronize(waiter_);
    return {};
  }

  // The collectives that leave every variable's shape as it was: what their exchange learnt
  // stays true until some rank's shape generation moves.
  bool keepsShapes() const {
    return request_.kind == CollectiveKind::AllReduce || request_.kind == CollectiveKind::Reduce ||
           request_.kind == CollectiveKind::Gather;
  }

  // The fast path: the master knew every rank's shapes. A rank whose own shape disagrees means
  // the runtime's bookkeeping is wrong: fatal (the session aborts), never a silent mismatch.
  void knownShapes(std::vector<std::vector<Shape>>& shapes) {
    const size_t n = static_cast<size_t>(core_.size());
    shapes.resize(request_.vars.size());
    for (size_t k = 0; k < request_.vars.size(); ++k) {
      if (var(k).shape != request_.shapes[k]) {
        throw InternalError(str("rank ", core_.rank(), ": variable '", varName(k), "' is ",
                                shapeString(var(k).shape), ", the master took it for ",
                                shapeString(request_.shapes[k])));
      }
      shapes[k].assign(n, request_.shapes[k]);
    }
  }

  // shapes[k][r]: rank r's shape of variable k. Exchanged in rounds that fit the exchange area:
  // each rank sends as many shapes as fit (their sizes differ by rank), and a round counts the
  // fewest any rank sent, so every rank moves on by the same number.
  Status exchangeShapes(std::vector<std::vector<Shape>>& shapes) {
    const size_t n_vars = request_.vars.size();
    const int n = core_.size();
    shapes.assign(n_vars, std::vector<Shape>(static_cast<size_t>(n)));
    for (size_t begin = 0; begin < n_vars;) {
      ByteWriter shapes_here;
      uint64_t sent = 0;
      for (size_t k = begin; k < n_vars; ++k) {
        // The count, the shapes so far, this one, and the exchange's own size field must fit.
        const size_t bytes = sizeof(uint64_t) * (1 + var(k).shape.size());
        if (3 * sizeof(uint64_t) + shapes_here.size() + bytes > kExchangeBytes) break;
        shapes_here.putVector(var(k).shape);
        ++sent;
      }
      ByteWriter mine;
      mine.put<uint64_t>(sent);
      mine.append(shapes_here.data(), shapes_here.size());
      ExchangeResult all = exchange(core_.group().barrier(), waiter_, true, mine);
      uint64_t taken = sent;
      for (int r = 0; r < n; ++r)
        taken = std::min(taken, all.from[r].get<uint64_t>());
      if (taken == 0) {
        return Status::invalid(str(kindName(request_.kind), " of variable '", varName(begin),
                                   "': its shape has too many dimensions to exchange"));
      }
      for (int r = 0; r < n; ++r) {
        for (uint64_t j = 0; j < taken; ++j)
          shapes[begin + j][r] = all.from[r].getVector<int64_t>();
      }
      begin += taken;
    }
    return {};
  }

  Status checkShapes(size_t k, const std::vector<Shape>& shapes) {
    // Built only for an error: the check runs on every rank at every collective.
    auto where = [&] { return str(kindName(request_.kind), " of variable '", varName(k), "'"); };
    auto describe = [&](int r) { return str(shapeString(shapes[r]), " on rank ", r); };
    switch (request_.kind) {
      case CollectiveKind::Reduce:
      case CollectiveKind::AllReduce:
        for (int r = 1; r < core_.size(); ++r) {
          if (shapes[r] != shapes[0]) {
            return Status::invalid(str(where(), ": shapes differ: ", describe(0), ", ", describe(r),
                                       " (reduce needs equal shapes)"));
          }
        }
        return {};
      case CollectiveKind::Gather:
        if (request_.nd_up == 1) {
          for (int r = 1; r < core_.size(); ++r) {
            if (shapes[r] != shapes[0]) {
              return Status::invalid(str(where(), " with nd_up=1: shapes differ: ", describe(0),
                                         ", ", describe(r),
                                         " (stacking needs equal shapes; nd_up=0 "
                                         "concatenates unequal lengths)"));
            }
          }
          return {};
        }
        [[fallthrough]];
      case CollectiveKind::AllGather:
        for (int r = 0; r < core_.size(); ++r) {
          if (shapes[r].empty()) {
            return Status::invalid(str(where(), ": a scalar cannot be concatenated along axis 0"));
          }
          if (trailing(shapes[r]) != trailing(shapes[0])) {
            return Status::invalid(str(where(), ": trailing dimensions differ: ", describe(0), ", ",
                                       describe(r),
                                       " (concatenation along axis 0 needs equal "
                                       "trailing dimensions)"));
          }
        }
        return {};
      default:
        return {};
    }
  }

  void runOne(size_t k, const std::vector<Shape>& shapes, std::vector<Array>& results) {
    VariableStorage& v = var(k);
    const size_t esize = dtypeSize(v.dtype);
    const size_t count = static_cast<size_t>(numElements(v.shape));
    const bool master = core_.isMaster();
    const int root = core_.masterRank();
    switch (request_.kind) {
      case CollectiveKind::AllReduce: {
        AllReduceArgs args{v.buffer.data(), count, v.dtype, request_.op};
        comm().allReduce(args, waiter_);
        return;
      }
      case CollectiveKind::Reduce: {
        DeviceBuffer& out = core_.collectiveBuffer();
        if (master && !request_.in_place) out.reserve(device_, std::max<size_t>(count * esize, 1));
        ReduceArgs args;
        args.send = v.buffer.data();
        args.recv = master ? (request_.in_place ? v.buffer.data() : out.data()) : nullptr;
        args.count = count;
        args.dtype = v.dtype;
        args.op = request_.op;
        args.root = root;
        comm().reduce(args, waiter_);
        if (master) results.push_back(toHost(args.recv, v.dtype, v.shape));
        return;
      }
      case CollectiveKind::Gather:
      case CollectiveKind::GetValue: {
        GatherArgs args;
        Shape result;
        int64_t rows = 0;
        for (int r = 0; r < core_.size(); ++r) {
          const bool included = request_.kind == CollectiveKind::Gather || r == request_.rank;
          args.counts.push_back(included ? static_cast<size_t>(numElements(shapes[r])) : 0);
          if (included) rows += shapes[r].empty() ? 1 : shapes[r][0];
        }
        if (request_.kind == CollectiveKind::GetValue) {
          result = shapes[request_.rank];
        } else if (request_.nd_up == 1) {
          result = shapes[0];
          result.insert(result.begin(), core_.size());
        } else {
          result = shapes[0];
          result[0] = rows;
        }
        DeviceBuffer& out = core_.collectiveBuffer();
        if (master) out.reserve(device_, std::max<size_t>(numElements(result) * esize, 1));
        args.send = v.buffer.data();
        args.recv = master ? out.data() : nullptr;
        args.dtype = v.dtype;
        args.root = root;
        comm().gather(args, waiter_);
        if (master) results.push_back(toHost(out.data(), v.dtype, result));
        return;
      }
      case CollectiveKind::AllGather: {
        AllGatherArgs args;
        Shape result = shapes[0];
        result[0] = 0;
        for (int r = 0; r < core_.size(); ++r) {
          args.counts.push_back(static_cast<size_t>(numElements(shapes[r])));
          result[0] += shapes[r][0];
        }
        DeviceBuffer gathered(device_, std::max<size_t>(numElements(result) * esize, 1));
        args.send = v.buffer.data();
        args.recv = gathered.data();
        args.dtype = v.dtype;
        comm().allGather(args, waiter_);
        v.buffer.swap(gathered);
        core_.reshapeStorage(v, result);  // the size matches: counts the shape change only
        // The old storage (now in `gathered`) must outlive the collective reading it.
        device_.synchronize(waiter_);
        return;
      }
      case CollectiveKind::Shapes:
        if (master) core_.shapeResults().push_back(shapes);
        return;
      default:
        return;
    }
  }

  Array toHost(const void* data, DType dtype, const Shape& shape) {
    copied_to_host_ = true;
    Array out(dtype, shape);
    if (out.bytes()) device_.copy(out.data(), data, out.bytes(), CopyKind::DeviceToHost);
    return out;
  }

  SessionCore& core_;
  CollectiveRequest request_;
  Waiter& waiter_;
  Device& device_;
  bool copied_to_host_ = false;
};

Status SessionCore::executeCollective(ByteReader& in, Waiter& waiter) {
  CollectiveExecution execution(*this, CollectiveRequest::read(in), waiter);
  return execution.run();
}

// ---- master side

namespace {

CollectiveRequest requestFor(SessionCore& core, CollectiveKind kind,
                             const std::vector<Variable>& vars) {
  if (vars.empty()) throw InvalidArgument(str(kindName(kind), ": no variables given"));
  CollectiveRequest request;
  request.kind = kind;
  // The runtime's own collectives (get_value, rank-local reads, ...) and the user's unless they
  // asked: native where the session has it.
  request.nccl = core.resolveNative(std::nullopt);
  for (const Variable& v : vars) {
    const auto [model, index] = core.resolve(v, kindName(kind));
    request.vars.push_back({model, index});
  }
  return request;
}

void checkNotMirrored(SessionCore& core, const CollectiveRequest& request, const char* why) {
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = core.variableSpec(ref.model, ref.index);
    if (spec.kind == VariableKind::Mirrored) {
      throw InvalidArgument(str(kindName(request.kind), " of mirrored variable '", spec.name,
                                "': ", why,
                                " (mirrored variables change only through broadcast "
                                "or all_reduce)"));
    }
  }
}

// Data sources of scatter / set_value: same dtype and ndim as the variable, batch in range.
void addSources(SessionCore& core, CollectiveRequest& request, const std::vector<Data>& values,
                const Selection& batch) {
  if (values.size() != request.vars.size()) {
    throw InvalidArgument(str(kindName(request.kind), ": ", values.size(), " value(s) for ",
                              request.vars.size(), " variable(s)"));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    const VariableSpec& spec = core.variableSpec(request.vars[k].model, request.vars[k].index);
    const std::string where = str(kindName(request.kind), " of variable '", spec.name, "'");
    const DataImpl& d = core.resolve(values[k], where);
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
  }
  request.batch = batch;
}

void checkRank(SessionCore& core, int rank, const char* what) {
  if (rank < 0 || rank >= core.size()) {
    throw InvalidArgument(str(what, ": rank ", rank, " is not a rank of ", core.size()));
  }
}

}  // namespace

namespace {

// The fast path: when the master knows every rank's shape of every variable, the ranks skip the
// shape exchange (a barrier and its bookkeeping: about a fifth of a small collective's cost).
void useKnownShapes(SessionCore& core, CollectiveRequest& request) {
  request.shapes.resize(request.vars.size());
  for (size_t k = 0; k < request.vars.size(); ++k) {
    if (!core.knownUniformShape(request.vars[k].model, request.vars[k].index, request.shapes[k])) {
      request.shapes.clear();
      return;
    }
  }
  request.shapes_known = 1;
}

std::vector<Array> run(SessionCore& core, const CollectiveRequest& request) {
  core.distribute();  // collectives need the variables on every rank
  ByteWriter payload;
  request.write(payload);
  core.results().clear();
  core.shapeResults().clear();
  // Plain concatenation: a collective may be issued thousands of times a second.
  std::string what = kindName(request.kind);
  what += " of '";
  what += core.variableSpec(request.vars[0].model, request.vars[0].index).name;
  what += "'";
  if (request.vars.size() > 1) what += " and " + std::to_string(request.vars.size() - 1) + " more";
  core.runCommand(Opcode::Collective, payload, what);
  return std::move(core.results());
}

}  // namespace

void SessionCore::broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                            bool nccl) {
  CollectiveRequest request = requestFor(*this, CollectiveKind::Broadcast, vars);
  if (!values.empty() && values.size() != vars.size()) {
    throw InvalidArgument(
        str("broadcast: ", values.size(), " value(s) for ", vars.size(), " variable(s)"));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    setStorage(request.vars[k].model, request.vars[k].index, values[k], false);
  }
  for (const VarRef& ref : request.vars)
    request.shapes.push_back(storage(ref.model, ref.index).shape);
  request.nccl = nccl;
  run(*this, request);
}

void SessionCore::scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
                          const Selection& batch) {
  CollectiveRequest request = requestFor(*this, CollectiveKind::Scatter, vars);
  checkNotMirrored(*this, request, "scattering gives each rank different rows");
  addSources(*this, request, values, batch);
  for (size_t k = 0; k < request.values.size(); ++k) {
    if (request.values[k].shape.empty()) {
      throw InvalidArgument(str("scatter of variable '",
                                variableSpec(request.vars[k].model, request.vars[k].index).name,
                                "': a scalar cannot be scattered"));
    }
  }
  run(*this, request);
}

std::vector<Array> SessionCore::gather(const std::vector<Variable>& vars, int nd_up, bool nccl) {
  if (nd_up != 0 && nd_up != 1) {
    throw InvalidArgument(str("gather: nd_up must be 0 (concatenate) or 1 (stack), got ", nd_up));
  }
  CollectiveRequest request = requestFor(*this, CollectiveKind::Gather, vars);
  request.nd_up = nd_up;
  request.nccl = nccl;
  useKnownShapes(*this, request);
  return run(*this, request);
}

void SessionCore::allGather(const std::vector<Variable>& vars, bool nccl) {
  CollectiveRequest request = requestFor(*this, CollectiveKind::AllGather, vars);
  request.nccl = nccl;
  run(*this, request);
}

std::vector<Array> SessionCore::reduce(const std::vector<Variable>& vars, ReduceOp op,
                                       bool in_place, bool nccl) {
  CollectiveRequest request = requestFor(*this, CollectiveKind::Reduce, vars);
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = variableSpec(ref.model, ref.index);
    if (!isCollectiveOp(op, spec.dtype)) {
      checkCollectiveOp(op, spec.dtype, str("reduce of variable '", spec.name, "'"));
    }
  }
  if (in_place)
    checkNotMirrored(*this, request, "an in-place reduce changes only the master's copy");
  request.op = op;
  request.in_place = in_place;
  request.nccl = nccl;
  useKnownShapes(*this, request);
  return run(*this, request);
}

void SessionCore::allReduce(const std::vector<Variable>& vars, ReduceOp op, bool nccl) {
  CollectiveRequest request = requestFor(*this, CollectiveKind::AllReduce, vars);
  for (const VarRef& ref : request.vars) {
    const VariableSpec& spec = variableSpec(ref.model, ref.index);
    if (!isCollectiveOp(op, spec.dtype)) {
      checkCollectiveOp(op, spec.dtype, str("all_reduce of variable '", spec.name, "'"));
    }
  }
  request.op = op;
  request.nccl = nccl;
  useKnownShapes(*this, request);
  run(*this, request);
}

void SessionCore::setValue(int rank, const std::vector<Variable>& vars,
                           const std::vector<Data>& values, const Selection& batch) {
  checkRank(*this, rank, "set_value");
  CollectiveRequest request = requestFor(*this, CollectiveKind::SetValue, vars);
  checkNotMirrored(*this, request, "setting one rank's copy breaks the mirror");
  addSources(*this, request, values, batch);
  request.rank = rank;
  run(*this, request);
}

std::vector<Array> SessionCore::getValue(int rank, const std::vector<Variable>& vars) {
  checkRank(*this, rank, "get_value");
  CollectiveRequest request = requestFor(*this, CollectiveKind::GetValue, vars);
  request.rank = rank;
  return run(*this, request);
}

std::vector<std::vector<Shape>> SessionCore::getShapes(const std::vector<Variable>& vars) {
  run(*this, requestFor(*this, CollectiveKind::Shapes, vars));
  return std::move(shape_results_);
}

}  // namespace synk::detail
