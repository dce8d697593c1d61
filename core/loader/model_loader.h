#pragma once
// The loader interface: how the runtime loads a model, instantiates it on each rank and calls it.
// plugins/ implements it on top of the C plugin ABI (plugins/abi/synk_plugin.h) with Boost.DLL;
// a program hands one to forkSession() (synk/synk.h passes the default). A LoadedModel is one
// loaded library; every rank instantiates it once after fork, on its own Device, and calls its
// functions on its slice of the data. What a model declares is core/model.h.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/device.h"
#include "synk/core/model.h"
#include "synk/core/reduce_op.h"

namespace synk {

// A tensor in device memory, as a function sees it.
struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::Float32;
  Shape shape;
};

// One invocation of a function on one rank's slice.
class CallFrame {
 public:
  // `outputs`: the function's declared outputs (FunctionSpec::outputs), which output() checks
  // requests against; they must outlive the frame.
  explicit CallFrame(const std::vector<TensorSpec>& outputs)
      : declared_(&outputs), allocated_(outputs.size(), 0) {}
  virtual ~CallFrame() = default;
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  int function = 0;                // index into ModelSpec::functions
  std::vector<TensorRef> inputs;   // in FunctionSpec::inputs order (scattered rows or whole)
  std::vector<TensorRef> reads;    // in FunctionSpec::reads order (sliceable ones sliced)
  std::vector<TensorRef> updates;  // in FunctionSpec::updates order; write the new value here
  // Per output (FunctionSpec::outputs order): 0 = the caller does not use it, so it need not be
  // produced; nullptr = every output is used.
  const uint8_t* wanted_outputs = nullptr;
  // Every rank's rows of the scattered inputs in this call, rank order (n_ranks entries); null
  // when unknown to the rank: no scattered inputs, a sliced call, a local call.
  const int64_t* rank_rows = nullptr;

  // Allocates output `index` (FunctionSpec::outputs order) with the `ndim` dimensions at `dims`
  // in device memory and returns where to write it; the dtype is the declared one. The one place
  // a model's request is checked (every model, through the plugin ABI or not): an index past the
  // outputs, a second request for one output, another ndim than declared, a missing shape or a
  // negative dimension throw InvalidArgument naming the output.
  void* output(size_t index, int ndim, const int64_t* dims);
  void* output(size_t index, const Shape& shape) {
    return output(index, static_cast<int>(shape.size()), shape.data());
  }
  // Whether output `index` was allocated in this call.
  bool allocated(size_t index) const { return allocated_.at(index) != 0; }

 protected:
  // The memory of a checked request; called at most once per output.
  virtual void* allocate(int index, const Shape& shape) = 0;

 private:
  const std::vector<TensorSpec>* declared_;
  std::vector<uint8_t> allocated_;
};

// Collectives a model may run during one of its calls, served by the session: on the host device
// through shared memory (done on return), on CUDA enqueued on the rank's stream. Every rank must
// make the same sequence of them within a call.
class CallCollectives {
 public:
  virtual ~CallCollectives() = default;
  // op: sum, avg, max, min. Throws UsageError outside a call, the communicator's errors (a peer
  // failed, ranks diverged, the deadline passed: the session is then aborted) otherwise.
  virtual void allReduce(void* buffer, size_t count, DType dtype, ReduceOp op) = 0;
  // Every rank's `count` elements at `send`, concatenated in rank order into `recv` (n_ranks x
  // count; no overlap with send). Outside a session's ranks (a local call) recv gets send.
  virtual void allGather(const void* send, void* recv, size_t count, DType dtype) = 0;
};

struct RankInfo {
  int rank = 0;
  int n_ranks = 1;
  Device* device = nullptr;
  CallCollectives* collectives = nullptr;  // null: the model gets no all_reduce service
};

class ModelInstance {
 public:
  virtual ~ModelInstance() = default;
  // Throws PluginError with the plugin's message when the function fails.
  virtual void call(CallFrame& frame) = 0;
};

class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual const ModelSpec& spec() const = 0;
  // Where it came from (the plugin path), for messages.
  virtual const std::string& source() const = 0;
  // Creates this rank's instance (after fork, on the rank's device). Throws PluginError.
  virtual std::unique_ptr<ModelInstance> instantiate(const RankInfo& info) = 0;
};

class ModelLoader {
 public:
  virtual ~ModelLoader() = default;
  // Loads and validates a model built with `options` (the declarations may depend on them);
  // throws PluginError naming the file, symbol and versions, or an option the model does not
  // accept together with the ones it does.
  virtual std::shared_ptr<LoadedModel> load(const std::string& path,
                                            const ModelOptions& options = {}) = 0;
};

}  // namespace synk
