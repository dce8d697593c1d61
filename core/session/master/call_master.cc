// CallMaster (call_master.h): function calls, the master's side: validate everything the master
// can know before any rank moves, then run the call step (step/call_exec.cc) and return the
// master's reduced outputs.
#include <algorithm>

#include "synk/core/error.h"
#include "synk/core/session/data_impl.h"
#include "synk/core/session/master/call_master.h"
#include "synk/core/session/session_core.h"
#include "synk/core/step/call_request.h"

namespace synk::detail {
namespace {

std::string inputLabel(const FunctionSpec& spec, size_t i) {
  return str("function '", spec.name, "' input '", spec.inputs[i].name, "'");
}

// Rows the batch selects, checked against every scattered input.
int64_t checkBatch(const FunctionSpec& spec, const FunctionBinding& b,
                   const std::vector<const DataImpl*>& data, const Selection& batch) {
  if (batch.isAll()) {
    // Every scattered input is used whole: they must agree on their length.
    int64_t rows = -1;
    size_t first = 0;
    for (size_t i = 0; i < data.size(); ++i) {
      if (b.broadcast[i]) continue;
      const int64_t length = data[i]->shape()[0];
      if (rows >= 0 && length != rows) {
        throw InvalidArgument(
            str("function '", spec.name, "': scattered inputs of unequal length: '",
                spec.inputs[first].name, "' has ", rows, " rows, '", spec.inputs[i].name, "' has ",
                length, " (select rows with batch, or make them equal)"));
      }
      if (rows < 0) {
        rows = length;
        first = i;
      }
    }
    return rows;
  }
  const int64_t rows = batch.size(0);
  for (size_t i = 0; i < data.size(); ++i) {
    if (b.broadcast[i]) continue;
    const int64_t length = data[i]->shape()[0];
    if (!data[i]->minibatch()) {
      batch.check(length, [&] { return str("batch for ", inputLabel(spec, i)); });
      continue;
    }
    // Minibatch data holds the batch's rows only, indexed from the batch's first row, so it
    // must have as many rows as the batch spans. A longer one is read at the wrong rows without
    // a word (a whole data set marked minibatch by mistake) unless the batch starts at row 0,
    // where its rows and the data set's agree.
    const int64_t first = batch.first();
    const int64_t needed = batch.isContiguous() ? rows : batch.extent() - first;
    if (needed > 0 && (length < needed || (first > 0 && length != needed))) {
      throw InvalidArgument(
          str(inputLabel(spec, i), ": minibatch ", data[i]->label(), " has ", length,
              " rows, but the batch selects rows ", first, "..", first + needed - 1,
              ", read as its rows 0..", needed - 1, ": ", needed, " rows expected",
              length < needed ? ""
                              : " (a minibatch Data holds exactly the batch's rows; to index "
                                "this one by absolute rows, create it without minibatch)"));
    }
  }
  return rows;
}

void checkBatchS(const FunctionSpec& spec, const FunctionBinding& b, const CallOptions& options,
                 int64_t batch_rows, int n_ranks) {
  if (options.batch_s.empty()) return;
  const std::string where = str("function '", spec.name, "'");
  if (!b.hasSliceableReads()) {
    throw InvalidArgument(str(where,
                              ": batch_s given but the function has no sliceable "
                              "variables (bind them with FunctionOptions::sliceable)"));
  }
  const size_t n = options.batch_s.size();
  if (n != 1 && n != static_cast<size_t>(n_ranks)) {
    throw InvalidArgument(str(where, ": batch_s has ", n, " selections for ", n_ranks,
                              " ranks (give one for every rank, or one per rank)"));
  }
  if (batch_rows < 0) return;
  // With scattered inputs too, each rank's batch_s must select exactly its share of the batch.
  for (int r = 0; r < n_ranks; ++r) {
    const Selection& s = options.batch_s[n == 1 ? 0 : static_cast<size_t>(r)];
    if (s.isAll()) continue;  // known on the rank only (the variable's length)
    const int64_t share = splitRows(batch_rows, n_ranks, r).size();
    if (s.size(0) != share) {
      throw InvalidArgument(str(where, ": batch_s for rank ", r, " selects ", s.size(0),
                                " rows but the rank's share of the batch is ", share, " rows"));
    }
  }
}

// output_subset as one flag per output; throws for a name that is no output or comes twice.
std::vector<uint8_t> wantedOutputs(const FunctionSpec& spec,
                                   const std::vector<std::string>& subset) {
  if (subset.empty()) return {};
  std::vector<uint8_t> wanted(spec.outputs.size(), 0);
  for (const std::string& name : subset) {
    size_t i = 0;
    while (i < spec.outputs.size() && spec.outputs[i].name != name)
      ++i;
    if (i == spec.outputs.size()) {
      std::string names;
      for (const TensorSpec& t : spec.outputs)
        names += str(names.empty() ? "" : ", ", t.name);
      throw InvalidArgument(str("function '", spec.name, "': output_subset names '", name,
                                "', which is not an output (outputs: ", names, ")"));
    }
    if (wanted[i]) {
      throw InvalidArgument(
          str("function '", spec.name, "': output_subset names '", name, "' twice"));
    }
    wanted[i] = 1;
  }
  return wanted;
}

// The wanted outputs arrive in declaration order; output_subset says in which to return them.
std::vector<Array> inSubsetOrder(const FunctionSpec& spec, const std::vector<std::string>& subset,
                                 std::vector<Array>& declared) {
  std::vector<Array> out;
  for (const std::string& name : subset) {
    size_t position = 0;  // among the wanted outputs, in declaration order
    for (const TensorSpec& t : spec.outputs) {
      if (t.name == name) break;
      position += std::find(subset.begin(), subset.end(), t.name) != subset.end() ? 1 : 0;
    }
    out.push_back(std::move(declared.at(position)));
  }
  return out;
}

}  // namespace

std::vector<Array> CallMaster::callFunction(uint32_t id, const std::vector<Data>& inputs,
                                            const CallOptions& options) {
  core_.lifecycle().ensureOpen();
  if (!core_.models().binding(id).distributed) core_.models().distribute();
  const FunctionBinding& b = core_.models().binding(id);
  const FunctionSpec& spec = core_.models().functionSpec(id);
  if (inputs.size() != spec.inputs.size()) {
    std::string names;
    for (const TensorSpec& t : spec.inputs)
      names += str(names.empty() ? "" : ", ", t.name);
    throw InvalidArgument(str("function '", spec.name, "' takes ", spec.inputs.size(),
                              " input(s) (", names, "), got ", inputs.size()));
  }
  if (options.num_slices < 1) {
    throw InvalidArgument(
        str("function '", spec.name, "': num_slices must be >= 1, got ", options.num_slices));
  }
  if (options.num_slices > 1) {
    const ModelSpec& mspec = table_.model(b.model).spec();
    for (size_t u = 0; u < b.update_vars.size(); ++u) {
      const VariableSpec& var = mspec.variables[b.update_vars[u]];
      checkCollectiveOp(b.update_ops[u], var.dtype,
                        str("function '", spec.name,
                            "' with num_slices > 1: combining the "
                            "slices' updates of '",
                            var.name, "' (bind it with an update op)"));
    }
  }
  std::vector<const DataImpl*>& data = data_;
  data.clear();
  CallRequest& request = request_;  // every field is set below
  request.function = id;
  request.inputs.resize(inputs.size());  // each input's shape keeps its capacity
  // The checks of resolve(Data), inline: resolve() takes its message prefix ready-made, and
  // formatting one per input on every call is what this path must not do.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw InvalidArgument(str(inputLabel(spec, i), ": empty Data handle"));
    const DataImpl& d = SessionCore::dataImpl(inputs[i]);
    if (&d.core() != &core_) {
      throw InvalidArgument(
          str(inputLabel(spec, i), ": ", d.label(), " belongs to another session"));
    }
    const TensorSpec& t = spec.inputs[i];
    if (d.dtype() != t.dtype || d.ndim() != t.ndim) {
      throw InvalidArgument(str(inputLabel(spec, i), " expects ", dtypeName(t.dtype), " with ndim ",
                                t.ndim, ", got ", d.label(), " of ", dtypeName(d.dtype()),
                                " with ndim ", d.ndim(), " (shape ", shapeString(d.shape()), ")"));
    }
    if (numElements(d.shape()) > 0 && d.allocElements() == 0) {
      throw InvalidArgument(str(inputLabel(spec, i), ": ", d.label(), " was freed"));
    }
    data.push_back(&d);
    CallInput& in = request.inputs[i];
    in.blob = d.ref();
    in.dtype = d.dtype();
    in.shape = d.shape();
    in.minibatch = d.minibatch();
    in.device_resident = d.deviceResident();
    in.version = d.version();
  }
  request.batch_rows = -1;
  if (b.hasScatteredInputs()) {
    // Zero rows is a valid call: every rank runs the function on zero rows, as asLocal would.
    request.batch_rows = checkBatch(spec, b, data, options.batch);
  } else if (!options.batch.isAll()) {
    throw InvalidArgument(
        str("function '", spec.name, "': batch given but the function has no scattered inputs"));
  }
  checkBatchS(spec, b, options, request.batch_rows, core_.lifecycle().size());
  request.batch = options.batch;
  request.batch_s = options.batch_s;
  request.num_slices = options.num_slices;
  request.wanted = wantedOutputs(spec, options.output_subset);
  request.windows = 0;
  for (size_t u = 0; u < b.update_vars.size() && options.num_slices == 1; ++u) {
    const auto index = static_cast<uint32_t>(b.update_vars[u]);
    if (table_.storage(b.model, index).bytes() >= kWindowMinBytes) request.windows = 1;
  }
  // Several nodes: their copies of the inputs first (of scattered ones, the rows they read).
  core_.data().shipCallInputs(data, request, b.broadcast);
  ByteWriter& payload = payload_;
  payload.clear();
  payload.write(request);
  std::vector<Array> outputs = core_.lifecycle().runStep(Opcode::Call, payload, b.what).arrays;
  if (options.output_subset.empty()) return outputs;
  return inSubsetOrder(spec, options.output_subset, outputs);
}
}  // namespace synk::detail
