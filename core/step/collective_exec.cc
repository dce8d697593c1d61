#include "synk/core/step/collective_exec.h"

#include <algorithm>

#include "synk/core/error.h"
#include "synk/core/memory/row_copy.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process/control/exchange.h"

namespace synk::detail {
namespace {

Shape trailing(const Shape& shape) {
  return Shape(shape.begin() + 1, shape.end());
}

}  // namespace

const char* kindName(CollectiveKind kind) {
  constexpr const char* kNames[] = {"broadcast",  "scatter",   "gather",    "all_gather", "reduce",
                                    "all_reduce", "set_value", "get_value", "get_shapes"};
  return kNames[static_cast<int>(kind)];
}

StepResult CollectiveHandler::run(ByteReader& payload, Waiter& waiter) {
  payload.read(request_);
  CollectiveExecution execution(rank_, table_, shapes_, result_buffer_, request_, list_, waiter);
  return execution.run();
}

StepResult CollectiveExecution::run() {
  switch (request_.kind) {
    case CollectiveKind::Broadcast:
      broadcast();
      break;
    case CollectiveKind::Scatter:
    case CollectiveKind::SetValue:
      // No barrier inside: a failure here is reported like bad input, the session goes on.
      try {
        takeRows();
      } catch (const std::exception& e) {
        result_.status = Status::fromException(e);
      }
      break;
    default:
      shaped();
  }
  return std::move(result_);
}

void CollectiveExecution::broadcast() {
  for (size_t k = 0; k < request_.vars.size(); ++k) {
    VariableStorage& v = var(k);
    if (v.shape != request_.shapes[k]) table_.reshape(v, request_.shapes[k]);
    BroadcastArgs args;
    args.buffer = v.buffer.data();
    args.count = static_cast<size_t>(numElements(v.shape));
    args.dtype = v.dtype;
    args.root = rank_.master_rank;
    comm().broadcast(args, waiter_);
  }
}

void CollectiveExecution::takeRows() {
  const bool scatter = request_.kind == CollectiveKind::Scatter;
  if (!scatter && rank_.rank != request_.rank) return;
  for (size_t k = 0; k < request_.vars.size(); ++k) {
    const CallInput& src = request_.values[k];
    const bool scalar = src.shape.empty();
    static const Selection kWhole;  // a scalar's one element
    const Selection& batch = scalar ? kWhole : request_.batch;
    const int64_t rows = scalar ? 1 : batch.size(src.shape[0]);
    const RowRange mine = scatter ? splitRows(rows, rank_.size, rank_.rank) : RowRange{0, rows};
    Shape shape = src.shape;
    if (!scalar) shape[0] = mine.size();
    VariableStorage& v = var(k);
    table_.reshape(v, shape);
    RowSource from{nullptr, rowBytes(shape, src.dtype), &batch, mine.begin, mine.size(), 0};
    if (from.bytes() == 0) continue;
    from.base = rank_.blobs->attach(src.blob);
    HeapBuffer staging;
    copyRows(device_, *rank_.heap, staging, v.buffer.data(), from);
    // The step must not end while a copy still reads the Data (the master may rewrite it), nor
    // before the staging buffer goes away.
    device_.synchronize(waiter_);
  }
}

// The collectives that need every rank's shapes first. Every shape is exchanged and checked
// before any variable moves: a bad shape anywhere fails the whole call with nothing changed.
void CollectiveExecution::shaped() {
  // The fast path of the fast path: an all_reduce on shapes the master knew. Every rank holds
  // the same shapes by construction, so there is nothing to compare across ranks; each only
  // confirms its own (a posted all_reduce, thousands a second, builds no per-rank copies).
  if (request_.shapes_known && request_.kind == CollectiveKind::AllReduce) {
    checkOwnShapes();
    allReduce();
    return;
  }
  std::vector<RankShapes> shapes;
  if (request_.shapes_known) {
    knownShapes(shapes);
  } else if (Status ok = exchangeShapes(shapes); !ok.ok()) {
    result_.status = std::move(ok);
    return;
  }
  // Every rank checks the same shapes, so all return the same error before any collective.
  for (size_t k = 0; k < request_.vars.size(); ++k) {
    Status ok = checkShapes(k, shapes[k]);
    if (!ok.ok()) {
      result_.status = std::move(ok);
      return;
    }
  }
  if (!request_.shapes_known && keepsShapes() && rank_.isMaster()) {
    for (size_t k = 0; k < request_.vars.size(); ++k) {
      const RankShapes& all = shapes[k];
      if (std::all_of(all.begin(), all.end(), [&](const Shape& s) { return s == all[0]; })) {
        shapes_.remember(request_.vars[k].model, request_.vars[k].index, all[0]);
      }
    }
  }
  if (request_.kind == CollectiveKind::AllReduce) {
    allReduce();
    return;  // stays queued on the device (stream-ordered before anything that reads it later)
  }
  for (size_t k = 0; k < request_.vars.size(); ++k)
    runOne(k, shapes[k]);
  // Only results copied to the host need the device to finish.
  if (copied_to_host_) device_.synchronize(waiter_);
}

// The collectives that leave every variable's shape as it was: what their exchange learnt
// stays true until some rank's shape generation moves.
bool CollectiveExecution::keepsShapes() const {
  return request_.kind == CollectiveKind::AllReduce || request_.kind == CollectiveKind::Reduce ||
         request_.kind == CollectiveKind::Gather;
}

// The fast path: the master knew every rank's shapes. A rank whose own shape disagrees means
// the runtime's bookkeeping is wrong: fatal (the session aborts), never a silent mismatch.
void CollectiveExecution::checkOwnShapes() {
  for (size_t k = 0; k < request_.vars.size(); ++k) {
    if (var(k).shape != request_.shapes[k]) {
      throw InternalError(str("rank ", rank_.rank, ": variable '", varName(k), "' is ",
                              shapeString(var(k).shape), ", the master took it for ",
                              shapeString(request_.shapes[k])));
    }
  }
}

void CollectiveExecution::knownShapes(std::vector<RankShapes>& shapes) {
  checkOwnShapes();
  const auto n = static_cast<size_t>(rank_.size);
  shapes.resize(request_.vars.size());
  for (size_t k = 0; k < request_.vars.size(); ++k)
    shapes[k].assign(n, request_.shapes[k]);
}

// shapes[k][r]: rank r's shape of variable k. Exchanged in rounds that fit the exchange area:
// each rank sends as many shapes as fit (their sizes differ by rank), and a round counts the
// fewest any rank sent, so every rank moves on by the same number.
Status CollectiveExecution::exchangeShapes(std::vector<RankShapes>& shapes) {
  const size_t n_vars = request_.vars.size();
  const int n = rank_.size;
  shapes.assign(n_vars, RankShapes(static_cast<size_t>(n)));
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
    ExchangeResult all = exchange(rank_.barrier(), waiter_, true, mine);
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

Status CollectiveExecution::checkShapes(size_t k, const RankShapes& shapes) {
  // Built only for an error: the check runs on every rank at every collective.
  auto where = [&] { return str(kindName(request_.kind), " of variable '", varName(k), "'"); };
  auto describe = [&](int r) { return str(shapeString(shapes[r]), " on rank ", r); };
  switch (request_.kind) {
    case CollectiveKind::Reduce:
    case CollectiveKind::AllReduce:
      for (int r = 1; r < rank_.size; ++r) {
        if (shapes[r] != shapes[0]) {
          return Status::invalid(str(where(), ": shapes differ: ", describe(0), ", ", describe(r),
                                     " (reduce needs equal shapes)"));
        }
      }
      return {};
    case CollectiveKind::Gather:
      if (request_.nd_up == 1) {
        for (int r = 1; r < rank_.size; ++r) {
          if (shapes[r] != shapes[0]) {
            return Status::invalid(str(where(), " with nd_up=1: shapes differ: ", describe(0), ", ",
                                       describe(r),
                                       " (stacking needs equal shapes; nd_up=0 "
                                       "concatenates unequal lengths)"));
          }
        }
        return {};
      }
      [[fallthrough]];
    case CollectiveKind::AllGather:
      for (int r = 0; r < rank_.size; ++r) {
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

// Every variable in one collective of the communicator (one NCCL group, one barrier pair).
void CollectiveExecution::allReduce() {
  list_.clear();
  for (size_t k = 0; k < request_.vars.size(); ++k) {
    VariableStorage& v = var(k);
    list_.push_back(
        {v.buffer.data(), static_cast<size_t>(numElements(v.shape)), v.dtype, request_.op});
  }
  PhaseScope phase(Phase::Collective);
  comm().allReduceList(list_, waiter_);
}

void CollectiveExecution::runOne(size_t k, const RankShapes& shapes) {
  VariableStorage& v = var(k);
  const size_t esize = dtypeSize(v.dtype);
  const size_t count = static_cast<size_t>(numElements(v.shape));
  const bool master = rank_.isMaster();
  const int root = rank_.master_rank;
  switch (request_.kind) {
    case CollectiveKind::Reduce: {
      DeviceBuffer& out = result_buffer_;
      if (master && !request_.in_place) out.reserve(device_, std::max<size_t>(count * esize, 1));
      ReduceArgs args;
      args.send = v.buffer.data();
      args.recv = master ? (request_.in_place ? v.buffer.data() : out.data()) : nullptr;
      args.count = count;
      args.dtype = v.dtype;
      args.op = request_.op;
      args.root = root;
      {
        PhaseScope phase(Phase::Collective);
        comm().reduce(args, waiter_);
      }
      if (master) result_.arrays.push_back(toHost(args.recv, v.dtype, v.shape));
      return;
    }
    case CollectiveKind::Gather:
    case CollectiveKind::GetValue: {
      GatherArgs args;
      Shape result;
      int64_t rows = 0;
      for (int r = 0; r < rank_.size; ++r) {
        const bool included = request_.kind == CollectiveKind::Gather || r == request_.rank;
        args.counts.push_back(included ? static_cast<size_t>(numElements(shapes[r])) : 0);
        if (included) rows += shapes[r].empty() ? 1 : shapes[r][0];
      }
      if (request_.kind == CollectiveKind::GetValue) {
        result = shapes[request_.rank];
      } else if (request_.nd_up == 1) {
        result = shapes[0];
        result.insert(result.begin(), rank_.size);
      } else {
        result = shapes[0];
        result[0] = rows;
      }
      DeviceBuffer& out = result_buffer_;
      if (master) out.reserve(device_, std::max<size_t>(numElements(result) * esize, 1));
      args.send = v.buffer.data();
      args.recv = master ? out.data() : nullptr;
      args.dtype = v.dtype;
      args.root = root;
      {
        PhaseScope phase(Phase::Collective);
        comm().gather(args, waiter_);
      }
      if (master) result_.arrays.push_back(toHost(out.data(), v.dtype, result));
      return;
    }
    case CollectiveKind::AllGather: {
      AllGatherArgs args;
      Shape result = shapes[0];
      result[0] = 0;
      for (int r = 0; r < rank_.size; ++r) {
        args.counts.push_back(static_cast<size_t>(numElements(shapes[r])));
        result[0] += shapes[r][0];
      }
      DeviceBuffer gathered(device_, std::max<size_t>(numElements(result) * esize, 1));
      args.send = v.buffer.data();
      args.recv = gathered.data();
      args.dtype = v.dtype;
      comm().allGather(args, waiter_);
      v.buffer.swap(gathered);
      table_.reshape(v, result);  // the size matches: counts the shape change only
      // The old storage (now in `gathered`) must outlive the collective reading it.
      device_.synchronize(waiter_);
      return;
    }
    case CollectiveKind::Shapes:
      if (master) result_.shapes.push_back(shapes);
      return;
    default:
      return;
  }
}

Array CollectiveExecution::toHost(const void* data, DType dtype, const Shape& shape) {
  copied_to_host_ = true;
  Array out = device_.resultArray(dtype, shape);
  if (out.bytes()) device_.copy(out.data(), data, out.bytes(), CopyKind::DeviceToHost);
  return out;
}

}  // namespace synk::detail
