// LocalCall (local_call.h): Function::asLocal.
#include "synk/core/session/master/local_call.h"

#include "synk/core/error.h"
#include "synk/core/session/session_core.h"

namespace synk::detail {
namespace {

// Outputs the model asks for (CallFrame::output has checked each request).
class LocalFrame final : public CallFrame {
 public:
  LocalFrame(Device& device, const FunctionSpec& spec)
      : CallFrame(spec.outputs),
        device_(device),
        spec_(spec),
        outputs_(spec.outputs.size()),
        shapes_(spec.outputs.size()) {}

  void* allocate(int index, const Shape& shape) override {
    const TensorSpec& out = spec_.outputs[static_cast<size_t>(index)];
    outputs_[index].reserve(device_,
                            std::max<size_t>(numElements(shape) * dtypeSize(out.dtype), 1));
    shapes_[index] = shape;
    return outputs_[index].data();
  }

  Device& device_;
  const FunctionSpec& spec_;
  std::vector<DeviceBuffer> outputs_;
  std::vector<Shape> shapes_;
};

}  // namespace

std::vector<Array> LocalCall::run(uint32_t id, const std::vector<ArrayView>& inputs) {
  core_.lifecycle().ensureOpen();
  const FunctionBinding& b = core_.models().binding(id);
  ModelState& model = table_.model(b.model);
  const FunctionSpec& spec = core_.models().functionSpec(id);
  if (inputs.size() != spec.inputs.size()) {
    throw InvalidArgument(str("function '", spec.name, "' takes ", spec.inputs.size(),
                              " input(s), got ", inputs.size()));
  }
  Device& dev = *rank_.device;
  LocalFrame frame(dev, spec);
  frame.function = static_cast<int>(b.index);
  std::vector<Array> converted;
  std::vector<DeviceBuffer> device_inputs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& t = spec.inputs[i];
    converted.push_back(conditionValue(inputs[i], t.dtype, t.ndim, false,
                                       str("function '", spec.name, "' input '", t.name, "'")));
    void* data = converted.back().data();
    if (!dev.isHost()) {
      device_inputs[i].reserve(dev, std::max<size_t>(converted.back().bytes(), 1));
      dev.copy(device_inputs[i].data(), data, converted.back().bytes(), CopyKind::HostToDevice);
      data = device_inputs[i].data();
    }
    frame.inputs.push_back({data, t.dtype, converted.back().shape()});
  }
  for (int32_t v : b.read_vars)
    frame.reads.push_back(model.variables[v].tensor());
  std::vector<DeviceBuffer> updates(b.update_vars.size());
  for (size_t u = 0; u < b.update_vars.size(); ++u) {
    const VariableStorage& var = model.variables[b.update_vars[u]];
    updates[u].reserve(dev, std::max<size_t>(var.bytes(), 1));
    frame.updates.push_back({updates[u].data(), var.dtype, var.shape});
  }
  {
    InCallCollectives::Scope collectives(call_collectives_);
    model.instance->call(frame);
  }
  for (size_t o = 0; o < spec.outputs.size(); ++o) {
    if (!frame.allocated(o)) {
      throw PluginError(str("function '", spec.name, "' returned without producing output '",
                            spec.outputs[o].name, "'"));
    }
  }
  for (size_t u = 0; u < b.update_vars.size(); ++u) {
    model.variables[b.update_vars[u]].buffer.swap(updates[u]);
  }
  std::vector<Array> results;
  for (size_t o = 0; o < spec.outputs.size(); ++o) {
    Array out(spec.outputs[o].dtype, frame.shapes_[o]);
    if (out.bytes()) {
      dev.copy(out.data(), frame.outputs_[o].data(), out.bytes(), CopyKind::DeviceToHost);
    }
    results.push_back(std::move(out));
  }
  core_.lifecycle().synchronizeOutsideStep("as_local");
  return results;
}

}  // namespace synk::detail
