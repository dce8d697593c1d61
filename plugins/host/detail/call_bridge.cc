// DllModelInstance::call: a core CallFrame becomes a synk_call; outputs the plugin requests are
// allocated through CallFrame::output; a failure becomes a PluginError with the plugin's message.
#include <string>
#include <vector>

#include "synk/core/error.h"
#include "synk/plugins/host/detail/dll_model.h"

#include <algorithm>

namespace synk::plugin_host {
namespace {

// The host side of synk_call.allocate_output for one call: CallFrame::output checks the request
// against the declaration. Exceptions stop here: the plugin sees NULL, the reason is kept for the
// error message.
struct OutputRequests {
  CallFrame* frame;
  std::string error;

  static void* allocate(void* host, uint32_t index, int32_t ndim, const int64_t* shape) noexcept {
    auto* self = static_cast<OutputRequests*>(host);
    try {
      return self->frame->output(index, ndim, shape);
    } catch (const std::exception& e) {
      try {
        if (self->error.empty()) self->error = e.what();
      } catch (...) {
      }
      return nullptr;
    } catch (...) {  // noexcept: nothing may escape to the plugin
      return nullptr;
    }
  }
};

// Fills `out` (reused across calls); the tensors' shape pointers point into `refs`, which
// outlives the call.
const std::vector<synk_tensor>& toRaw(const std::vector<TensorRef>& refs,
                                      std::vector<synk_tensor>& out) {
  out.clear();
  for (const TensorRef& ref : refs) {
    synk_tensor tensor{};
    tensor.struct_size = sizeof tensor;
    tensor.dtype = static_cast<int32_t>(ref.dtype);
    tensor.ndim = static_cast<int32_t>(ref.shape.size());
    tensor.data = ref.data;
    tensor.shape = ref.shape.data();
    out.push_back(tensor);
  }
  return out;
}

const VariableSpec& findVariable(const ModelSpec& spec, const std::string& name) {
  for (const VariableSpec& v : spec.variables) {
    if (v.name == name) return v;
  }
  throw InternalError(str("variable '", name, "' vanished from model '", spec.name, "'"));
}

}  // namespace

std::vector<DllModelInstance::FunctionVariables> DllModelInstance::resolveVariables(
    const ModelSpec& spec) {
  std::vector<FunctionVariables> out;
  for (const FunctionSpec& fn : spec.functions) {
    FunctionVariables vars;
    for (const std::string& name : fn.reads)
      vars.reads.push_back(&findVariable(spec, name));
    for (const std::string& name : fn.updates)
      vars.updates.push_back(&findVariable(spec, name));
    out.push_back(std::move(vars));
  }
  return out;
}

// The frame comes from the runtime, not from the plugin: a mismatch is the caller's mistake and
// is reported before the plugin can misread memory.
// Messages are formatted only on failure: a call must not pay for them.
void DllModelInstance::checkFrame(const CallFrame& frame, const FunctionSpec& fn) const {
  auto what = [&] { return str(prefix(), ": function '", fn.name, "'"); };
  auto count = [&](size_t got, size_t declared, const char* role) {
    if (got != declared) {
      throw InvalidArgument(str(what(), " declares ", declared, " ", role, "; the call has ", got));
    }
  };
  count(frame.inputs.size(), fn.inputs.size(), "inputs");
  count(frame.reads.size(), fn.reads.size(), "reads");
  count(frame.updates.size(), fn.updates.size(), "updates");
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const TensorSpec& decl = fn.inputs[i];
    const TensorRef& ref = frame.inputs[i];
    if (ref.dtype != decl.dtype || static_cast<int>(ref.shape.size()) != decl.ndim) {
      throw InvalidArgument(str(what(), ": input '", decl.name, "' is ", dtypeName(ref.dtype), " ",
                                shapeString(ref.shape), "; declared ", dtypeName(decl.dtype),
                                " with ndim ", decl.ndim));
    }
  }
  auto checkVariables = [&](const std::vector<const VariableSpec*>& vars,
                            const std::vector<TensorRef>& refs, const char* role) {
    for (size_t i = 0; i < vars.size(); ++i) {
      const VariableSpec& v = *vars[i];
      if (refs[i].dtype != v.dtype) {
        throw InvalidArgument(str(what(), ": ", role, " of variable '", v.name, "' is ",
                                  dtypeName(refs[i].dtype), "; declared ", dtypeName(v.dtype)));
      }
    }
  };
  const FunctionVariables& vars = variables_[static_cast<size_t>(frame.function)];
  checkVariables(vars.reads, frame.reads, "read");
  checkVariables(vars.updates, frame.updates, "update");
}

void DllModelInstance::call(CallFrame& frame) {
  if (frame.function < 0 || static_cast<size_t>(frame.function) >= spec_->functions.size()) {
    throw InvalidArgument(str(prefix(), " has ", spec_->functions.size(),
                              " functions; no function ", frame.function));
  }
  const FunctionSpec& fn = spec_->functions[frame.function];
  checkFrame(frame, fn);
  const std::vector<synk_tensor>& inputs = toRaw(frame.inputs, raw_.inputs);
  const std::vector<synk_tensor>& reads = toRaw(frame.reads, raw_.reads);
  const std::vector<synk_tensor>& updates = toRaw(frame.updates, raw_.updates);
  OutputRequests outputs{&frame, {}};

  synk_call raw{};
  raw.struct_size = sizeof raw;
  raw.function = static_cast<uint32_t>(frame.function);
  raw.function_name = fn.name.c_str();
  raw.n_inputs = static_cast<uint32_t>(inputs.size());
  raw.inputs = inputs.data();
  raw.n_reads = static_cast<uint32_t>(reads.size());
  raw.reads = reads.data();
  raw.n_updates = static_cast<uint32_t>(updates.size());
  raw.updates = updates.data();
  raw.n_outputs = static_cast<uint32_t>(fn.outputs.size());
  raw.host = &outputs;
  raw.allocate_output = &OutputRequests::allocate;
  raw.wanted_outputs = frame.wanted_outputs;
  raw.rank_rows = frame.rank_rows;
  auto wanted = [&](size_t i) { return !frame.wanted_outputs || frame.wanted_outputs[i]; };

  collective_failure_ = nullptr;
  const synk_status status = library_->table().call(instance_, &raw);
  if (collective_failure_) {
    std::exception_ptr failure = collective_failure_;
    collective_failure_ = nullptr;
    std::rethrow_exception(failure);
  }
  bool complete = true;
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    complete = complete && (frame.allocated(i) || !wanted(i));
  if (status == SYNK_OK && outputs.error.empty() && complete) return;
  const std::string failed = str(prefix(), ": function '", fn.name, "' failed: ");
  if (status != SYNK_OK) {
    const char* message = library_->table().last_error(instance_);
    std::string text =
        message && *message ? std::string(message) : str("(no message; ", statusName(status), ")");
    if (!outputs.error.empty()) text += str(" (host: ", outputs.error, ")");
    throw PluginError(failed + text);
  }
  if (!outputs.error.empty()) {
    throw PluginError(
        str(failed, "it returned SYNK_OK after an output was refused: ", outputs.error));
  }
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    if (!frame.allocated(i) && wanted(i)) {
      throw PluginError(
          str(failed, "it returned without allocating output '", fn.outputs[i].name, "'"));
    }
  }
}

}  // namespace synk::plugin_host
