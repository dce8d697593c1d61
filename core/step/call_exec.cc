// Function calls, on every rank (the master included); this file takes steps 1 and the call's
// run, call_exec_outputs.cc steps 2 and 3:
//   1. compute: take this rank's rows of the batch, run the function slice by slice, and
//      accumulate outputs and updates (each slice sees the original variable values);
//   2. agree: one barrier exchange of ok flags, row counts and output shapes;
//   3. finish (only if every rank succeeded and the shapes fit): apply updates locally, reduce
//      the outputs onto the master.
// Errors in 1 are reported through the Status and leave every variable unchanged; anything
// failing in 3 is fatal for the session (ranks may be inside a collective).
#include "synk/core/step/call_exec.h"

#include <algorithm>
#include <cstring>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/memory/row_copy.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process/control/exchange.h"

namespace synk::detail {

StepResult CallHandler::run(ByteReader& payload, Waiter& waiter) {
  payload.read(request_);
  CallExecution call(rank_, table_, collectives_, request_, reuse_, waiter);
  return call.run();
}

CallExecution::CallExecution(const RankResources& rank, ModelTable& table,
                             InCallCollectives& collectives, const CallRequest& request,
                             CallReuse& reuse, Waiter& waiter)
    : rank_(rank),
      collectives_(collectives),
      request_(request),
      offer_(reuse.offer),
      waiter_(waiter),
      binding_(table.binding(request_.function)),
      model_(table.model(binding_.model)),
      spec_(model_.spec().functions[binding_.index]),
      scratch_(table.scratch(request_.function)),
      device_(*rank.device),
      rank_rows_(reuse.rank_rows),
      broadcast_inputs_(reuse.broadcast_inputs),
      resident_rows_(reuse.resident_rows),
      slice_shapes_(reuse.slice_shapes),
      acc_shapes_(reuse.acc_shapes),
      gather_part_shapes_(reuse.gather_part_shapes),
      all_rows_(reuse.all_rows),
      contributes_(reuse.contributes),
      all_shapes_(reuse.all_shapes),
      agreed_shapes_(reuse.agreed_shapes),
      inline_bytes_(reuse.inline_bytes),
      inline_at_(reuse.inline_at),
      windows_(reuse.windows) {
  const size_t n_in = spec_.inputs.size(), n_out = spec_.outputs.size();
  scratch_.inputs.resize(n_in);
  scratch_.staging.resize(n_in);
  scratch_.reads.resize(spec_.reads.size());
  scratch_.update_slice.resize(spec_.updates.size());
  scratch_.update_acc.resize(spec_.updates.size());
  scratch_.output_slice.resize(n_out);
  scratch_.output_acc.resize(n_out);
  scratch_.gather_parts.resize(n_out);
  // The reused containers this call reads before it writes them start empty, as fresh ones.
  slice_shapes_.resize(n_out);
  acc_shapes_.resize(n_out);
  gather_part_shapes_.resize(n_out);
  for (size_t o = 0; o < n_out; ++o) {
    slice_shapes_[o].clear();
    acc_shapes_[o].clear();
    gather_part_shapes_[o].clear();
  }
  inline_bytes_.clear();
}

std::string CallExecution::where() const {
  return str("function '", spec_.name, "'");
}

StepResult CallExecution::run() {
  Status& status = result_.status;
  try {
    plan();
  } catch (const std::exception& e) {
    status = Status::fromException(e);
  }
  windows_.clear();
  try {
    if (agreeOnWindows(status.ok()) && status.ok()) computeSlices();
  } catch (const std::exception& e) {
    status = Status::fromException(e);
  }
  collectives_.setWindows(nullptr);
  ByteWriter& mine = offer_;
  mine.clear();
  mine.put<int64_t>(rows_);
  for (const Shape& shape : acc_shapes_)
    mine.putVector(shape);
  // Not computed with an ok status: another rank's plan failed (agreeOnWindows), so there is
  // nothing to offer and the agreement fails on that rank's error.
  offerInlineOutputs(mine, status.ok() && computed_);
  bool all_ok = false;
  {
    PhaseScope agreeing(Phase::Agree);
    ExchangeResult all = exchange(rank_.barrier(), waiter_, status.ok(), mine);
    all_ok = all.all_ok;
    if (all_ok) status = agree(all);
  }
  if (all_ok && status.ok()) {
    PhaseScope finishing(Phase::Finish);
    applyUpdates();
    reduceOutputs();
  }
  // Copies out of host memory may still be queued, on failure paths too: finish them before the
  // step ends, or the master could overwrite a Data (or the next call its staging rows) before
  // the device has read them.
  if (host_reads_pending_) device_.synchronize(waiter_);
  // Step times: the span of the plugin's work on the device, once it is done.
  if (stepTimesOn()) currentStepTimes().device_ns = device_.workSpanNs(waiter_);
  return std::move(result_);
}

// ---- 1. compute

void CallExecution::plan() {
  const int rank = rank_.rank, n = rank_.size;
  row_based_ = binding_.hasScatteredInputs() || binding_.hasSliceableReads();
  if (binding_.hasScatteredInputs()) {
    mine_ = splitRows(request_.batch_rows, n, rank);
    rows_ = mine_.size();
  }
  if (binding_.hasSliceableReads()) {
    batch_s_ = request_.batchS(rank);
    int64_t selected = -1;
    std::string first_var;
    for (size_t j = 0; j < spec_.reads.size(); ++j) {
      if (!binding_.sliceable[j]) continue;
      const VariableStorage& var = readStorage(j);
      batch_s_.check(var.shape[0], [&] {
        return str(where(), ": batch_s for variable '", spec_.reads[j], "' on rank ", rank);
      });
      const int64_t size = batch_s_.size(var.shape[0]);
      if (selected >= 0 && size != selected) {
        throw InvalidArgument(str(where(), ": sliceable variables of unequal length on rank ", rank,
                                  ": '", first_var, "' gives ", selected, " rows, '",
                                  spec_.reads[j], "' gives ", size));
      }
      selected = size;
      first_var = spec_.reads[j];
    }
    if (binding_.hasScatteredInputs() && selected != rows_) {
      throw InvalidArgument(str(where(), ": on rank ", rank, " the sliceable variables give ",
                                selected, " rows but the rank's share of the batch is ", rows_,
                                " rows"));
    }
    if (!binding_.hasScatteredInputs()) rows_ = selected;
  }
  if (!row_based_) rows_ = 1;
  slices_ = row_based_ ? std::max(1, request_.num_slices) : 1;
  rank_rows_.clear();
  if (binding_.hasScatteredInputs() && slices_ == 1) {
    for (int r = 0; r < n; ++r)
      rank_rows_.push_back(splitRows(request_.batch_rows, n, r).size());
  }
}

const VariableStorage& CallExecution::readStorage(size_t j) const {
  return model_.variables[static_cast<size_t>(binding_.read_vars[j])];
}

void CallExecution::computeSlices() {
  {
    PhaseScope phase(Phase::Inputs);
    prepareBroadcastInputs();
  }
  for (int s = 0; s < slices_; ++s) {
    const RowRange local = row_based_ ? splitRows(rows_, slices_, s) : RowRange{0, 1};
    // A rank whose share is empty still runs the function once, on zero rows: its updates are
    // what the function computes from nothing (a zero gradient), never last step's values.
    if (local.size() == 0 && (rows_ > 0 || s > 0)) continue;
    // Host staging buffers are reused by the next slice: earlier copies out of them must end.
    if (!device_.isHost() && s > 0 && staged_) device_.synchronize(waiter_);
    staged_ = false;
    runSlice(local);
    accumulateSlice(local.size());
    computed_ = true;
  }
  // A gather output's shape on this rank: its slices concatenated along axis 0.
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    if (binding_.output_ops[o] != ReduceOp::Gather) continue;
    for (const Shape& part : gather_part_shapes_[o]) {
      if (acc_shapes_[o].empty()) {
        acc_shapes_[o] = part;
      } else {
        acc_shapes_[o][0] += part[0];
      }
    }
  }
}

void CallExecution::runSlice(const RowRange& local) {
  Frame frame(*this);
  frame.function = static_cast<int>(binding_.index);
  {
    PhaseScope inputs(Phase::Inputs);
    for (size_t i = 0; i < spec_.inputs.size(); ++i) {
      frame.inputs.push_back(binding_.broadcast[i] ? broadcast_inputs_[i]
                                                   : scatteredInput(i, local));
    }
  }
  for (size_t j = 0; j < spec_.reads.size(); ++j) {
    frame.reads.push_back(binding_.sliceable[j] ? sliceableRead(j, local)
                                                : readStorage(j).tensor());
  }
  for (size_t u = 0; u < spec_.updates.size(); ++u) {
    const VariableStorage& var = model_.variables[static_cast<size_t>(binding_.update_vars[u])];
    scratch_.update_slice[u].reserve(device_, std::max<size_t>(var.bytes(), 1));
    frame.updates.push_back({scratch_.update_slice[u].data(), var.dtype, var.shape});
  }
  frame.wanted_outputs = request_.wanted.empty() ? nullptr : request_.wanted.data();
  frame.rank_rows = rank_rows_.empty() ? nullptr : rank_rows_.data();
  slice_index_ = static_cast<int>(slice_count_++);
  {
    PhaseScope phase(Phase::Plugin);
    InCallCollectives::Scope collectives(collectives_, waiter_);
    if (stepTimesOn()) device_.markWork(true);
    model_.instance->call(frame);
    if (stepTimesOn()) device_.markWork(false);
  }
  // The plugin bridge reports a missing output first; this holds for any ModelInstance.
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    if (request_.wants(o) && !frame.allocated(o)) {
      throw PluginError(str(where(), " of model '", model_.spec().name,
                            "' returned without producing output '", spec_.outputs[o].name, "'"));
    }
  }
}

void* CallExecution::allocateOutput(int index, const Shape& shape) {
  const TensorSpec& out = spec_.outputs[static_cast<size_t>(index)];
  const size_t bytes = std::max<size_t>(numElements(shape) * dtypeSize(out.dtype), 1);
  DeviceBuffer* buffer = &scratch_.output_slice[static_cast<size_t>(index)];
  if (binding_.output_ops[static_cast<size_t>(index)] == ReduceOp::Gather) {
    auto& parts = scratch_.gather_parts[static_cast<size_t>(index)];
    if (parts.size() <= static_cast<size_t>(slice_index_)) parts.resize(slice_index_ + 1);
    buffer = &parts[static_cast<size_t>(slice_index_)];
  }
  buffer->reserve(device_, bytes);
  slice_shapes_[static_cast<size_t>(index)] = shape;
  return buffer->data();
}

// ---- accumulation over slices: buffers are swapped, never copied, when a slice is the first.

void CallExecution::accumulateSlice(int64_t slice_rows) {
  const bool first = !computed_;
  const double weight = row_based_ && rows_ > 0 ? double(slice_rows) / double(rows_) : 1.0;
  for (size_t o = 0; o < spec_.outputs.size(); ++o) {
    if (!request_.wants(o)) continue;  // not in output_subset: ignored if produced anyway
    const ReduceOp op = binding_.output_ops[o];
    const Shape& shape = slice_shapes_[o];
    if (op == ReduceOp::Gather) {
      Shape part = shape.empty() ? Shape{1} : shape;
      const auto& parts = gather_part_shapes_[o];
      if (!parts.empty() && (part.size() != parts[0].size() ||
                             !std::equal(part.begin() + 1, part.end(), parts[0].begin() + 1))) {
        throw PluginError(str(where(), " output '", spec_.outputs[o].name, "' has shape ",
                              shapeString(part), " in one slice and ", shapeString(parts[0]),
                              " in another (gather needs equal trailing dims)"));
      }
      gather_part_shapes_[o].push_back(std::move(part));
      continue;
    }
    if (!first && op != ReduceOp::None && shape != acc_shapes_[o]) {
      throw PluginError(str(where(), " output '", spec_.outputs[o].name, "' has shape ",
                            shapeString(shape), " in one slice and ", shapeString(acc_shapes_[o]),
                            " in another"));
    }
    combine(scratch_.output_acc[o], scratch_.output_slice[o], numElements(shape),
            spec_.outputs[o].dtype, op, weight, first);
    acc_shapes_[o] = shape;
  }
  for (size_t u = 0; u < spec_.updates.size(); ++u) {
    const VariableStorage& var = model_.variables[static_cast<size_t>(binding_.update_vars[u])];
    combine(scratch_.update_acc[u], scratch_.update_slice[u], numElements(var.shape), var.dtype,
            binding_.update_ops[u], weight, first);
  }
}

void CallExecution::combine(DeviceBuffer& acc, DeviceBuffer& slice, int64_t count, DType dtype,
                            ReduceOp op, double weight, bool first) {
  const auto n = static_cast<size_t>(count);
  if (op == ReduceOp::Avg && weight != 1.0) device_.scale(slice.data(), n, dtype, weight);
  if (first || op == ReduceOp::None) {
    acc.swap(slice);  // the slice's result becomes the accumulator; no copy
    return;
  }
  device_.accumulate(acc.data(), slice.data(), n, dtype, op);
}

// ---- inputs

std::byte* CallExecution::residentCopy(const CallInput& in) {
  bool copied = false;
  const size_t bytes = static_cast<size_t>(numElements(in.shape)) * dtypeSize(in.dtype);
  std::byte* base = rank_.blobs->deviceCopy(in.blob, in.version, bytes, copied);
  host_reads_pending_ = host_reads_pending_ || copied;
  return base;
}

TensorRef CallExecution::residentInput(size_t i, const RowRange& local) {
  const CallInput& in = request_.inputs[i];
  Shape shape = in.shape;
  shape[0] = local.size();
  const size_t row_bytes = rowBytes(in.shape, in.dtype);
  std::byte* base = residentCopy(in);
  const int64_t p0 = mine_.begin + local.begin;
  const int64_t offset = in.minibatch ? request_.batch.first() : 0;
  if (request_.batch.isContiguous()) {
    return {base + static_cast<size_t>(request_.batch.rowAt(p0) - offset) * row_bytes, in.dtype,
            shape};
  }
  resident_rows_.resize(static_cast<size_t>(local.size()));
  for (int64_t k = 0; k < local.size(); ++k)
    resident_rows_[static_cast<size_t>(k)] = request_.batch.rowAt(p0 + k) - offset;
  scratch_.inputs[i].reserve(device_,
                             std::max<size_t>(static_cast<size_t>(local.size()) * row_bytes, 1));
  device_.gatherRows(scratch_.inputs[i].data(), base, row_bytes, resident_rows_.data(),
                     resident_rows_.size());
  return {scratch_.inputs[i].data(), in.dtype, shape};
}

TensorRef CallExecution::scatteredInput(size_t i, const RowRange& local) {
  const CallInput& in = request_.inputs[i];
  if (in.device_resident && !device_.isHost()) return residentInput(i, local);
  Shape shape = in.shape;
  shape[0] = local.size();
  if (local.size() == 0) {  // zero rows: a valid pointer, no row of the Data is touched
    scratch_.inputs[i].reserve(device_, 1);
    return {scratch_.inputs[i].data(), in.dtype, shape};
  }
  // Positions in the batch -> rows of this input (minibatch data counts from the batch's first).
  const RowSource rows{rank_.blobs->attach(in.blob),
                       rowBytes(in.shape, in.dtype),
                       &request_.batch,
                       mine_.begin + local.begin,
                       local.size(),
                       in.minibatch ? request_.batch.first() : 0};
  if (device_.isHost() && rows.contiguous()) {  // zero copy: ranks read shm directly
    return {const_cast<std::byte*>(rows.rows()), in.dtype, shape};
  }
  // Otherwise copied; an index list is gathered by every rank for its own rows, in parallel.
  scratch_.inputs[i].reserve(device_, std::max<size_t>(rows.bytes(), 1));
  if (copyRows(device_, *rank_.heap, scratch_.staging[i], scratch_.inputs[i].data(), rows)) {
    host_reads_pending_ = true;
    staged_ = staged_ || !rows.contiguous();
  }
  return {scratch_.inputs[i].data(), in.dtype, shape};
}

void CallExecution::prepareBroadcastInputs() {
  broadcast_inputs_.assign(spec_.inputs.size(), TensorRef{});
  for (size_t i = 0; i < spec_.inputs.size(); ++i) {
    if (!binding_.broadcast[i]) continue;
    const CallInput& in = request_.inputs[i];
    const size_t bytes = static_cast<size_t>(numElements(in.shape)) * dtypeSize(in.dtype);
    if (in.device_resident && !device_.isHost() && bytes) {
      broadcast_inputs_[i] = {residentCopy(in), in.dtype, in.shape};
      continue;
    }
    std::byte* base = bytes ? rank_.blobs->attach(in.blob) : nullptr;
    if (device_.isHost()) {
      broadcast_inputs_[i] = {base, in.dtype, in.shape};
      continue;
    }
    scratch_.inputs[i].reserve(device_, std::max<size_t>(bytes, 1));
    host_reads_pending_ = true;
    if (bytes) device_.copy(scratch_.inputs[i].data(), base, bytes, CopyKind::HostToDevice);
    broadcast_inputs_[i] = {scratch_.inputs[i].data(), in.dtype, in.shape};
  }
}

TensorRef CallExecution::sliceableRead(size_t j, const RowRange& local) {
  const VariableStorage& var = readStorage(j);
  Shape shape = var.shape;
  shape[0] = local.size();
  const size_t row_bytes = rowBytes(var.shape, var.dtype);
  auto* base = static_cast<std::byte*>(var.buffer.data());
  if (local.size() == 0) {
    scratch_.reads[j].reserve(device_, 1);
    return {scratch_.reads[j].data(), var.dtype, shape};
  }
  if (batch_s_.isContiguous()) {
    return {base + static_cast<size_t>(batch_s_.rowAt(local.begin)) * row_bytes, var.dtype, shape};
  }
  const size_t bytes = static_cast<size_t>(local.size()) * row_bytes;
  scratch_.reads[j].reserve(device_, std::max<size_t>(bytes, 1));
  device_.gatherRows(scratch_.reads[j].data(), base, row_bytes,
                     batch_s_.rows().data() + local.begin, static_cast<size_t>(local.size()));
  return {scratch_.reads[j].data(), var.dtype, shape};
}

}  // namespace synk::detail
