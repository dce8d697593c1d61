#pragma once
// Internal: the models of a session on one rank: each model's instance and its variables' storage,
// and how its functions are bound. Every rank holds the same ids (the master assigns them,
// distribute replicates them).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/device_buffer.h"
#include "synk/core/memory/heap_buffer.h"
#include "synk/core/model_loader.h"
#include "synk/core/session/rank_resources.h"

namespace synk::detail {

// One shared variable on this rank.
struct VariableStorage {
  DType dtype = DType::Float32;
  Shape shape;
  DeviceBuffer buffer;
  size_t bytes() const { return static_cast<size_t>(numElements(shape)) * dtypeSize(dtype); }
  TensorRef tensor() const { return {buffer.data(), dtype, shape}; }
};

struct ModelState {
  uint32_t id = 0;
  std::string path;
  ModelOptions options;  // what the model was loaded with; every rank loads it with the same
  std::shared_ptr<LoadedModel> model;
  std::unique_ptr<ModelInstance> instance;
  std::vector<VariableStorage> variables;  // ModelSpec::variables order
  bool distributed = false;                // master: replicated on every rank
  std::string dropped;  // master: why it was dropped (creating it failed on a rank); else empty
  const ModelSpec& spec() const { return model->spec(); }
};

// How a function is bound; identical on every rank (sent by distribute).
struct FunctionBinding {
  uint32_t id = 0;
  uint32_t model = 0;
  uint32_t index = 0;                // into ModelSpec::functions
  std::vector<uint8_t> broadcast;    // per input: 1 = used whole, 0 = scattered
  std::vector<ReduceOp> output_ops;  // per output
  std::vector<ReduceOp> update_ops;  // per update
  std::vector<uint8_t> sliceable;    // per read variable
  std::vector<int32_t> update_vars;  // per update: index of the variable in the model
  std::vector<int32_t> read_vars;    // per read: index of the variable in the model
  bool distributed = false;          // master only
  std::string what;                  // master only: "call of function 'f'", for messages
  std::string dropped;               // master only: why (its model was dropped); else empty

  bool hasScatteredInputs() const;
  bool hasSliceableReads() const;
  // What distribute sends (the master-only fields stay behind).
  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.id, self.model, self.index, self.broadcast, self.output_ops, self.update_ops,
       self.sliceable, self.update_vars, self.read_vars);
  }
};

// Device buffers a function reuses from call to call on one rank.
struct FunctionScratch {
  std::vector<DeviceBuffer> inputs;        // per input: device copy or gathered rows
  std::vector<HeapBuffer> staging;         // per input: host rows gathered for a device copy
  std::vector<DeviceBuffer> reads;         // per read: gathered sliceable rows
  std::vector<DeviceBuffer> update_slice;  // per update: what the slice computes
  std::vector<DeviceBuffer> update_acc;    // per update: accumulated over slices
  std::vector<DeviceBuffer> output_slice;  // per output
  std::vector<DeviceBuffer> output_acc;    // per output
  std::vector<std::vector<DeviceBuffer>> gather_parts;  // per output, per slice (gather op)
  DeviceBuffer result;                                  // master: gathered output
  HeapBuffer inline_outputs;  // a GPU rank's small outputs, copied out for the agreement exchange
};

class ModelTable {
 public:
  // Storage lives on rank.device (set once the backend started).
  explicit ModelTable(const RankResources& rank) : rank_(rank) {}

  // Lookups: an unknown id is an InternalError, a dropped model or function a UsageError
  // saying why.
  ModelState& model(uint32_t id);
  const FunctionBinding& binding(uint32_t id);
  const FunctionSpec& functionSpec(uint32_t id);
  VariableStorage& storage(uint32_t model, uint32_t index);
  const VariableSpec& variableSpec(uint32_t model, uint32_t index);
  FunctionScratch& scratch(uint32_t function) { return scratch_.at(function); }

  // Resizes a variable's storage on this rank (contents lost when it grows) and counts the shape
  // change in shapeGeneration().
  void reshape(VariableStorage& storage, const Shape& shape);
  // Bumped whenever a variable's shape changes on this rank (the collective fast path:
  // core/session/uniform_shapes.h).
  const uint64_t& shapeGeneration() const { return shape_generation_; }

  // The tables themselves, for loading and distributing. After changing functions(), call
  // functionsChanged().
  std::vector<ModelState>& models() { return models_; }
  std::vector<FunctionBinding>& functions() { return functions_; }
  void functionsChanged() { scratch_.resize(functions_.size()); }
  // A model whose creation failed on some rank: its instance and storage are released, its
  // handles and functions raise UsageError with `why` from now on.
  void drop(uint32_t id, const std::string& why);

  // Device memory back to the device (before the device goes away); plugin instances destroyed.
  void clear() noexcept;
  // In a copy of the master made by fork(): forgets everything without freeing it (the device
  // memory and the plugin instances are the master's).
  void abandon() noexcept;

 private:
  const RankResources& rank_;
  std::vector<ModelState> models_;
  std::vector<FunctionBinding> functions_;
  std::vector<FunctionScratch> scratch_;
  uint64_t shape_generation_ = 0;
};

}  // namespace synk::detail
