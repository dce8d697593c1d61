// Function calls, steps 2 and 3 (call_exec.cc has the whole picture and step 1): the agreement
// exchange with the small outputs inline, then the updates applied and the outputs reduced or
// gathered onto the master.
#include <algorithm>
#include <cstring>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/memory/row_copy.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process/control/exchange.h"
#include "synk/core/step/call_exec.h"

namespace synk::detail {

// Small element-wise outputs travel in the agreement exchange itself, and the master reduces
// them from there: no collective (two barriers and a location exchange fewer on the host; on a
// GPU no scaling kernel, no NCCL reduce and no copy of the result after it), the same arithmetic
// (each rank's value scaled by its share, summed in rank order by the host kernels). A GPU rank
// copies its outputs into pinned heap memory and waits for its stream first: every rank waits
// for its own device in parallel, where before the master waited for the reduce.
size_t CallExecution::outputBytes(size_t o, const Shape& shape) const {
  return static_cast<size_t>(numElements(shape)) * dtypeSize(spec_.outputs[o].dtype);
}

void CallExecution::offerInlineOutputs(ByteWriter& out, bool ok) {
  size_t bytes = 0;
  bool fits = ok;
  for (size_t o = 0; fits && o < spec_.outputs.size(); ++o) {
    if (inlineable(o)) bytes += outputBytes(o, acc_shapes_[o]);
    fits = bytes <= kInlineOutputBytes;
  }
  out.put<uint8_t>(fits ? 1 : 0);
  if (!fits) return;
  // A GPU rank stages them in pinned heap memory, one after another, and waits for its stream.
  const std::byte* staged = nullptr;
  if (!device_.isHost()) {
    PhaseScope phase(Phase::OutputCopy);
    scratch_.inline_outputs.reserve(*rank_.heap, std::max<size_t>(bytes, 1));
    auto* at = static_cast<std::byte*>(scratch_.inline_outputs.data());
    for (size_t o = 0; o < spec_.outputs.size(); ++o) {
      if (!inlineable(o)) continue;
      const size_t n = outputBytes(o, acc_shapes_[o]);
      device_.copy(at, scratch_.output_acc[o].data(), n, CopyKind::DeviceToHost);
      at += n;
    }
    device_.synchronize(waiter_);
    host_reads_pending_ = false;  // the wait covered every copy queued so far
    staged = static_cast<const std::byte*>(scratch_.inline_outputs.data());
    out.append(staged, bytes);
    return;
  }
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    if (inlineable(o)) out.append(scratch_.output_acc[o].data(), outputBytes(o, acc_shapes_[o]));
  }
}

Array CallExecution::reduceInline(size_t o) {
  const ReduceOp op = binding_.output_ops[o];
  const DType dtype = spec_.outputs[o].dtype;
  const Shape& shape = agreed_shapes_[o];
  const auto count = static_cast<size_t>(numElements(shape));
  Array result(dtype, shape);
  Array part(dtype, shape);
  for (int r = 0; r < rank_.size; ++r) {
    if (!contributes_[r]) {
      host::fillIdentity(part.data(), count, dtype, op);
    } else {
      std::memcpy(part.data(), inline_bytes_.data() + inline_at_[r][o], part.bytes());
      if (op == ReduceOp::Avg) host::scaleCopy(part.data(), part.data(), count, dtype, avgShare(r));
    }
    if (r == 0) {
      std::swap(result, part);
    } else {
      host::accumulate(result.data(), part.data(), count, dtype, op);
    }
  }
  return result;
}

// ---- 2. agree

Status CallExecution::agree(ExchangeResult& all) {
  const int n = rank_.size;
  const size_t n_out = spec_.outputs.size();
  all_rows_.assign(n, 0);
  all_shapes_.resize(n);  // each shape read into the last call's storage
  for (int r = 0; r < n; ++r) {
    all_rows_[r] = all.from[r].get<int64_t>();
    all_shapes_[r].resize(n_out);
    for (size_t o = 0; o < n_out; ++o)
      all.from[r].read(all_shapes_[r][o]);
  }
  // Each rank's inline outputs, if every rank could send them inline.
  inline_ = true;
  for (int r = 0; r < n; ++r)
    inline_ = all.from[r].get<uint8_t>() != 0 && inline_;
  // Only the master reduces them; the others have no use for a copy.
  if (inline_ && rank_.isMaster()) {
    inline_at_.resize(n);
    for (std::vector<size_t>& at : inline_at_)
      at.assign(n_out, 0);
  }
  for (int r = 0; inline_ && rank_.isMaster() && r < n; ++r) {
    for (size_t o = 0; o < spec_.outputs.size(); ++o) {
      if (!inlineable(o)) continue;
      const size_t bytes = outputBytes(o, all_shapes_[r][o]);
      inline_at_[r][o] = inline_bytes_.size();
      inline_bytes_.insert(inline_bytes_.end(), all.from[r].cursor(), all.from[r].cursor() + bytes);
      all.from[r].skip(bytes);
    }
  }
  // Every rank ran the function, but a rank without rows weighs nothing in the outputs (its
  // mean of no rows is NaN, its sum 0): outputs reduce over the ranks that had rows, or over
  // every rank when none had any (a zero-row call returns what the function makes of nothing).
  total_rows_ = 0;
  for (int r = 0; r < n; ++r)
    total_rows_ += all_rows_[r];
  contributes_.assign(n, true);
  contributing_ = n;
  if (row_based_ && total_rows_ > 0) {
    for (int r = 0; r < n; ++r)
      contributes_[r] = all_rows_[r] > 0;
    contributing_ = static_cast<int>(std::count(contributes_.begin(), contributes_.end(), true));
  }
  agreed_shapes_.resize(n_out);
  for (Shape& shape : agreed_shapes_)
    shape.clear();
  const int reference = static_cast<int>(std::find(contributes_.begin(), contributes_.end(), true) -
                                         contributes_.begin());
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    const ReduceOp op = binding_.output_ops[o];
    const Shape& ref = all_shapes_[reference][o];
    // none: the master's own value, whatever its share; an output left out: nothing to agree.
    if (op == ReduceOp::None || !request_.wants(o)) continue;
    for (int r = 0; r < n; ++r) {
      if (!contributes_[r]) continue;
      const Shape& other = all_shapes_[r][o];
      const bool fits = op == ReduceOp::Gather
                            ? other.size() == ref.size() &&
                                  std::equal(other.begin() + 1, other.end(), ref.begin() + 1)
                            : other == ref;
      if (!fits) {
        return Status::invalid(str(where(), " output '", spec_.outputs[o].name, "' has shape ",
                                   shapeString(ref), " on rank ", reference, " but ",
                                   shapeString(other), " on rank ", r,
                                   op == ReduceOp::Gather ? " (gather needs equal trailing dims)"
                                                          : " (reduce needs equal shapes)"));
      }
    }
    agreed_shapes_[o] = ref;
  }
  return {};
}

double CallExecution::avgShare(int rank) const {
  // Weighted by rows: the result equals the one-process result on uneven splits too.
  if (row_based_ && total_rows_ > 0) return double(all_rows_[rank]) / double(total_rows_);
  return 1.0 / double(contributing_);
}

// ---- 3. finish

void CallExecution::applyUpdates() {
  if (!computed_) return;
  for (size_t u = 0; u < spec_.updates.size(); ++u) {
    VariableStorage& var = model_.variables[static_cast<size_t>(binding_.update_vars[u])];
    var.buffer.swap(scratch_.update_acc[u]);
  }
}

void CallExecution::reduceOutputs() {
  Communicator& comm = *rank_.default_communicator;
  const bool master = rank_.isMaster();
  const int root = rank_.master_rank;
  std::vector<Array>& results = result_.arrays;
  // Whether a copy to the master's results is still queued: inline outputs were waited for.
  bool queued = false;
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    if (!request_.wants(o)) continue;
    const ReduceOp op = binding_.output_ops[o];
    const DType dtype = spec_.outputs[o].dtype;
    if (op == ReduceOp::None) {
      if (master) results.push_back(toHost(scratch_.output_acc[o], dtype, acc_shapes_[o]));
      queued = true;
      continue;
    }
    if (op == ReduceOp::Gather) {
      gatherOutput(o, comm);
      queued = true;
      continue;
    }
    if (inline_) {
      if (master) results.push_back(reduceInline(o));
      continue;
    }
    queued = true;
    const Shape& shape = agreed_shapes_[o];
    const auto count = static_cast<size_t>(numElements(shape));
    DeviceBuffer& acc = scratch_.output_acc[o];
    if (!contributes_[rank_.rank]) {
      acc.reserve(device_, std::max<size_t>(count * dtypeSize(dtype), 1));
      device_.fillIdentity(acc.data(), count, dtype, op);
    } else if (op == ReduceOp::Avg) {
      device_.scale(acc.data(), count, dtype, avgShare(rank_.rank));
    }
    ReduceArgs args;
    args.send = acc.data();
    args.recv = acc.data();
    args.count = count;
    args.dtype = dtype;
    args.op = op == ReduceOp::Avg ? ReduceOp::Sum : op;
    args.root = root;
    comm.reduce(args, waiter_);
    if (master) results.push_back(toHost(acc, dtype, shape));
  }
  if (master && queued) device_.synchronize(waiter_);
}

void CallExecution::gatherOutput(size_t o, Communicator& comm) {
  const DType dtype = spec_.outputs[o].dtype;
  const size_t esize = dtypeSize(dtype);
  const Shape& ref = agreed_shapes_[o];
  const size_t row_bytes = rowBytes(ref, dtype);
  const int64_t row_elems = static_cast<int64_t>(row_bytes / esize);
  DeviceBuffer& acc = scratch_.output_acc[o];
  const int64_t my_rows = acc_shapes_[o].empty() ? 0 : acc_shapes_[o][0];
  acc.reserve(device_, std::max<size_t>(static_cast<size_t>(my_rows) * row_bytes, 1));
  size_t at = 0;
  for (size_t k = 0; k < gather_part_shapes_[o].size(); ++k) {
    const size_t bytes = static_cast<size_t>(numElements(gather_part_shapes_[o][k])) * esize;
    device_.copy(static_cast<std::byte*>(acc.data()) + at, scratch_.gather_parts[o][k].data(),
                 bytes, CopyKind::DeviceToDevice);
    at += bytes;
  }
  // Every rank's row count (from the agreed shapes) gives the variable-length gather's counts.
  GatherArgs args;
  int64_t total = 0;
  for (int r = 0; r < rank_.size; ++r) {
    const int64_t rows = contributes_[r] && !all_shapes_[r][o].empty() ? all_shapes_[r][o][0] : 0;
    args.counts.push_back(static_cast<size_t>(rows * row_elems));
    total += rows;
  }
  Shape result_shape = ref;
  result_shape[0] = total;
  const bool master = rank_.isMaster();
  if (master) {
    scratch_.result.reserve(device_,
                            std::max<size_t>(static_cast<size_t>(total * row_elems) * esize, 1));
  }
  args.send = acc.data();
  args.recv = master ? scratch_.result.data() : nullptr;
  args.dtype = dtype;
  args.root = rank_.master_rank;
  comm.gather(args, waiter_);
  if (master) result_.arrays.push_back(toHost(scratch_.result, dtype, result_shape));
}

Array CallExecution::toHost(const DeviceBuffer& buffer, DType dtype, const Shape& shape) {
  Array out = device_.resultArray(dtype, shape);
  if (out.bytes()) device_.copy(out.data(), buffer.data(), out.bytes(), CopyKind::DeviceToHost);
  return out;
}

}  // namespace synk::detail
