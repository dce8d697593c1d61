#pragma once
// What a model sees at run time: the Context of its rank (constructor argument) and the Call of
// one invocation with typed tensor accessors. Part of plugins/sdk/synk_sdk.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "synk/plugins/sdk/detail/options.h"
#include "synk/plugins/sdk/detail/spec.h"
#include "synk/plugins/sdk/detail/types.h"

namespace synk::sdk {

// The rank a model instance runs on and the host services lent to it. Cheap to copy; valid until
// the instance is destroyed (the host keeps the structs alive that long).
class Context {
 public:
  Context(const synk_device_info* device, const synk_host_services* host, const Options* options)
      : device_(device), host_(host), options_(options) {}

  int rank() const { return device_->rank; }
  int nRanks() const { return device_->n_ranks; }
  DeviceKind device() const { return static_cast<DeviceKind>(device_->kind); }
  bool isCuda() const { return device() == DeviceKind::Cuda; }
  int ordinal() const { return device_->ordinal; }
  void* stream() const { return device_->stream; }  // cudaStream_t
  void* blas() const { return device_->blas; }      // cublasHandle_t
  void* comm() const { return device_->comm; }      // ncclComm_t or nullptr
  // The options the model was loaded with (what spec(options) saw).
  const Options& options() const { return *options_; }

  void log(LogLevel level, const std::string& message) const {
    host_->log(host_->host, static_cast<int32_t>(level), message.c_str());
  }
  // Device memory of the rank (host memory on the host device); throws on exhaustion.
  void* allocate(size_t bytes) const {
    void* pointer = host_->allocate(host_->host, bytes);
    if (!pointer) {
      throw Error(Status::OutOfMemory,
                  "the host could not allocate " + std::to_string(bytes) + " bytes");
    }
    return pointer;
  }
  void release(void* pointer) const { host_->release(host_->host, pointer); }

  // Whether the host serves allReduce (ABI 1.2).
  bool hasAllReduce() const { return SYNK_STRUCT_HAS(host_, synk_host_services, all_reduce); }
  // Reduces `count` elements in place over every rank, during a call (see synk_host_services:
  // every rank makes the same sequence of these, on the same update at the same offset where the
  // buffer is an update, never on a read; on CUDA it is enqueued on stream(), not waited for).
  // Throws sdk::Error when the host refuses or a peer fails (the host then reports why).
  void allReduce(void* buffer, size_t count, DType dtype, ReduceOp op) const {
    if (!hasAllReduce()) {
      throw Error(Status::Unsupported, "the host's plugin ABI is older than 1.2: no all_reduce");
    }
    const synk_status status = host_->all_reduce(
        host_->host, buffer, count, static_cast<int32_t>(dtype), static_cast<int32_t>(op));
    if (status != SYNK_OK) {
      throw Error(static_cast<Status>(status), "all_reduce of " + std::to_string(count) + " " +
                                                   dtypeName(dtype) + " elements failed");
    }
  }
  // Whether the host serves allGather (ABI 1.4).
  bool hasAllGather() const { return SYNK_STRUCT_HAS(host_, synk_host_services, all_gather); }
  // Every rank's `count` elements at `send`, concatenated in rank order into `recv` (nRanks() x
  // count elements, apart from send), during a call; the rules of allReduce.
  void allGather(const void* send, void* recv, size_t count, DType dtype) const {
    if (!hasAllGather()) {
      throw Error(Status::Unsupported, "the host's plugin ABI is older than 1.4: no all_gather");
    }
    const synk_status status =
        host_->all_gather(host_->host, send, recv, count, static_cast<int32_t>(dtype));
    if (status != SYNK_OK) {
      throw Error(static_cast<Status>(status), "all_gather of " + std::to_string(count) + " " +
                                                   dtypeName(dtype) + " elements failed");
    }
  }

 private:
  const synk_device_info* device_;
  const synk_host_services* host_;
  const Options* options_;
};

// A tensor of one call, in device memory. ConstTensor (inputs, reads) hands out const pointers so
// a function cannot write a variable in place by mistake.
template <bool kWritable>
class BasicTensor {
 public:
  using Pointer = std::conditional_t<kWritable, void*, const void*>;

  BasicTensor(const synk_tensor* raw, const std::string* name)
      : data_(raw->data),
        dtype_(static_cast<DType>(raw->dtype)),
        ndim_(raw->ndim),
        dims_(raw->shape),
        name_(name) {}
  BasicTensor(void* data, DType dtype, int ndim, const int64_t* dims, const std::string* name)
      : data_(data), dtype_(dtype), ndim_(ndim), dims_(dims), name_(name) {}

  const std::string& name() const { return *name_; }
  DType dtype() const { return dtype_; }
  int ndim() const { return ndim_; }
  Shape shape() const { return Shape(dims_, dims_ + ndim_); }
  int64_t dim(int axis) const {
    if (axis < 0 || axis >= ndim_) {
      throw Error(Status::InvalidArgument, "tensor '" + *name_ + "' has " + std::to_string(ndim_) +
                                               " dimensions; no axis " + std::to_string(axis));
    }
    return dims_[axis];
  }
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < ndim_; ++i)
      n *= dims_[i];
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(size()) * dtypeSize(dtype_); }
  Pointer data() const { return data_; }

  // Typed pointer; throws when T is not the tensor's element type.
  template <typename T>
  auto as() const -> std::conditional_t<kWritable, T*, const T*> {
    if (dtypeOf<T>() != dtype_) {
      throw Error(Status::InvalidArgument, "tensor '" + *name_ + "' is " + dtypeName(dtype_) +
                                               ", not " + dtypeName(dtypeOf<T>()));
    }
    return static_cast<std::conditional_t<kWritable, T*, const T*>>(data_);
  }

 private:
  void* data_;
  DType dtype_;
  int ndim_;
  const int64_t* dims_;
  const std::string* name_;
};

using Tensor = BasicTensor<true>;
using ConstTensor = BasicTensor<false>;

// One invocation of a function on one rank's slice. Tensors are valid until the model's call
// returns. Look tensors up by position (declaration order) or by declared name.
class Call {
 public:
  Call(const synk_call* raw, const Function* decl, int index, const Context* context)
      : raw_(raw),
        decl_(decl),
        index_(index),
        context_(context),
        shapes_(decl->outputs.size()),
        allocated_(decl->outputs.size(), false) {}

  int function() const { return index_; }
  const std::string& functionName() const { return decl_->name; }
  const Context& context() const { return *context_; }

  ConstTensor input(int index) const {
    checkIndex(index, decl_->inputs.size(), "input");
    return {synk_tensor_at(raw_->inputs, static_cast<uint32_t>(index)), &decl_->inputs[index].name};
  }
  ConstTensor input(std::string_view name) const {
    return input(find(decl_->inputs, name, "input"));
  }
  ConstTensor read(int index) const {
    checkIndex(index, decl_->reads.size(), "read");
    return {synk_tensor_at(raw_->reads, static_cast<uint32_t>(index)), &decl_->reads[index]};
  }
  ConstTensor read(std::string_view name) const { return read(find(decl_->reads, name, "read")); }
  // Where to write the variable's new value (pre-allocated with its current shape).
  Tensor update(int index) const {
    checkIndex(index, decl_->updates.size(), "update");
    return {synk_tensor_at(raw_->updates, static_cast<uint32_t>(index)), &decl_->updates[index]};
  }
  Tensor update(std::string_view name) const {
    return update(find(decl_->updates, name, "update"));
  }
  // Allocates output `index` with `shape` (as many dimensions as declared); once per output.
  Tensor output(int index, Shape shape) {
    checkIndex(index, decl_->outputs.size(), "output");
    const TensorDecl& out = decl_->outputs[index];
    if (static_cast<int>(shape.size()) != out.ndim) {
      throw Error(Status::InvalidArgument,
                  "output '" + out.name + "' is declared with " + std::to_string(out.ndim) +
                      " dimensions; allocated with shape " +
                      shapeString(shape.data(), static_cast<int>(shape.size())));
    }
    if (allocated_[index]) {
      throw Error(Status::InvalidArgument, "output '" + out.name + "' allocated twice");
    }
    for (size_t d = 0; d < out.shape.size(); ++d) {
      if (out.shape[d] != kAnySize && out.shape[d] != shape[d]) {
        throw Error(Status::InvalidArgument,
                    "output '" + out.name + "' is declared with shape " +
                        shapeString(out.shape.data(), out.ndim) + "; allocated with shape " +
                        shapeString(shape.data(), static_cast<int>(shape.size())));
      }
    }
    allocated_[index] = true;
    shapes_[index] = std::move(shape);
    const Shape& kept = shapes_[index];
    void* data =
        raw_->allocate_output(raw_->host, static_cast<uint32_t>(index), out.ndim, kept.data());
    if (!data) {
      throw Error(Status::OutOfMemory, "the host could not allocate output '" + out.name +
                                           "' with shape " + shapeString(kept.data(), out.ndim));
    }
    return {data, out.dtype, out.ndim, kept.data(), &out.name};
  }
  Tensor output(std::string_view name, Shape shape) {
    return output(find(decl_->outputs, name, "output"), std::move(shape));
  }
  // Whether the caller uses output `index` (a call's output_subset may leave some out): an
  // unwanted output need not be computed or allocated. Always true on a host of ABI 1.0.
  bool wants(int index) const {
    checkIndex(index, decl_->outputs.size(), "output");
    if (!SYNK_STRUCT_HAS(raw_, synk_call, wanted_outputs) || !raw_->wanted_outputs) return true;
    return raw_->wanted_outputs[index] != 0;
  }
  bool wants(std::string_view name) const { return wants(find(decl_->outputs, name, "output")); }

  // Every rank's rows of the scattered inputs in this call (context().nRanks() entries, rank
  // order; ABI 1.4), or empty where the host does not say: no scattered inputs, a sliced call,
  // a local call (the master alone), an older host.
  std::vector<int64_t> rankRows() const {
    if (!SYNK_STRUCT_HAS(raw_, synk_call, rank_rows) || !raw_->rank_rows) return {};
    return std::vector<int64_t>(raw_->rank_rows, raw_->rank_rows + context_->nRanks());
  }

 private:
  void checkIndex(int index, size_t count, const char* what) const {
    if (index < 0 || static_cast<size_t>(index) >= count) {
      throw Error(Status::InvalidArgument, "function '" + decl_->name + "' has " +
                                               std::to_string(count) + " " + what + "s; no " +
                                               what + " " + std::to_string(index));
    }
  }
  int find(const std::vector<TensorDecl>& list, std::string_view name, const char* what) const {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].name == name) return static_cast<int>(i);
    }
    throw Error(Status::InvalidArgument,
                "function '" + decl_->name + "' has no " + what + " '" + std::string(name) + "'");
  }
  int find(const std::vector<std::string>& list, std::string_view name, const char* what) const {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] == name) return static_cast<int>(i);
    }
    throw Error(Status::InvalidArgument, "function '" + decl_->name + "' does not " + what +
                                             " variable '" + std::string(name) + "'");
  }

  const synk_call* raw_;
  const Function* decl_;
  int index_;
  const Context* context_;
  std::vector<Shape> shapes_;  // output shapes stay alive for the Tensors handed out
  std::vector<bool> allocated_;
};

}  // namespace synk::sdk
