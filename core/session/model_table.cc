#include "synk/core/session/model_table.h"

#include <algorithm>

#include "synk/core/error.h"

namespace synk::detail {

bool FunctionBinding::hasScatteredInputs() const {
  return std::find(broadcast.begin(), broadcast.end(), 0) != broadcast.end();
}

bool FunctionBinding::hasSliceableReads() const {
  return std::find(sliceable.begin(), sliceable.end(), 1) != sliceable.end();
}

ModelState& ModelTable::model(uint32_t id) {
  SYNK_CHECK(id < models_.size(), "no model ", id);
  ModelState& m = models_[id];
  if (!m.dropped.empty()) throw UsageError(m.dropped);
  SYNK_CHECK(m.model, "no model ", id);
  return m;
}

const FunctionBinding& ModelTable::binding(uint32_t id) {
  SYNK_CHECK(id < functions_.size(), "no function ", id);
  const FunctionBinding& b = functions_[id];
  if (!b.dropped.empty()) throw UsageError(b.dropped);
  return b;
}

const FunctionSpec& ModelTable::functionSpec(uint32_t id) {
  const FunctionBinding& b = binding(id);
  return model(b.model).spec().functions[b.index];
}

VariableStorage& ModelTable::storage(uint32_t id, uint32_t index) {
  ModelState& m = model(id);
  SYNK_CHECK(index < m.variables.size(), "no variable ", index, " in model ", id);
  return m.variables[index];
}

const VariableSpec& ModelTable::variableSpec(uint32_t id, uint32_t index) {
  return model(id).spec().variables.at(index);
}

void ModelTable::reshape(VariableStorage& storage, const Shape& shape) {
  if (storage.shape != shape) ++shape_generation_;
  storage.shape = shape;
  storage.buffer.reserve(*rank_.device, std::max<size_t>(storage.bytes(), 1));
}

void ModelTable::drop(uint32_t id, const std::string& why) {
  ModelState& m = models_[id];
  const std::string dropped =
      str("model '", m.spec().name, "' (", m.path, ") was dropped: creating it failed: ", why);
  for (FunctionBinding& f : functions_) {
    if (f.model == id && f.dropped.empty()) {
      f.dropped = str("function '", m.spec().functions[f.index].name, "': ", dropped);
    }
  }
  m.instance.reset();
  m.variables.clear();
  m.dropped = dropped;
}

void ModelTable::clear() noexcept {
  scratch_.clear();
  for (ModelState& m : models_) {
    m.instance.reset();
    m.variables.clear();
  }
  models_.clear();
}

void ModelTable::abandon() noexcept {
  // Freeing these would call into the device (a CUDA context does not survive fork) or plugin
  // code on the master's behalf: the copy leaks them, its memory is its own to lose.
  (void)new auto(std::move(scratch_));
  (void)new auto(std::move(models_));
}

}  // namespace synk::detail
