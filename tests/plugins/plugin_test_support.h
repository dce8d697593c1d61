#pragma once
// What the plugin tests need from the runtime, in miniature: a host Device (standing in for
// collectives/cpu's HostDevice), a CallFrame that allocates outputs on a Device, a log sink that
// records, and the paths of the plugins the build put in lib/.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/device.h"
#include "synk/core/error.h"
#include "synk/core/model_loader.h"
#include "synk/synk.h"

namespace synk::testing {

// Next to the test binary (bin/../lib), so a copied build tree works too.
inline std::string pluginPath(const std::string& target) {
  return synk::pluginPath(target);
}

// Host memory from aligned_alloc, memcpy copies, no kernels. kind() may claim Cuda so tests can
// see how a plugin refuses a device it cannot use. Counts live allocations to catch leaks.
class TestDevice final : public Device {
 public:
  explicit TestDevice(DeviceKind kind = DeviceKind::Host) : kind_(kind) {}

  DeviceKind kind() const override { return kind_; }
  int ordinal() const override { return kind_ == DeviceKind::Host ? -1 : 0; }
  std::string describe() const override {
    return kind_ == DeviceKind::Host ? "cpu" : "cuda:0 (test device in host memory)";
  }
  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + 255) / 256 * 256;
    void* pointer = std::aligned_alloc(256, rounded ? rounded : 256);
    if (!pointer) throw SystemError("aligned_alloc", ENOMEM);
    ++live_;
    return pointer;
  }
  void release(void* pointer) noexcept override {
    if (!pointer) return;
    std::free(pointer);
    --live_;
  }
  void copy(void* dst, const void* src, size_t bytes, CopyKind) override {
    std::memcpy(dst, src, bytes);
  }
  void synchronize(Waiter&) override {}
  void accumulate(void*, const void*, size_t, DType, ReduceOp) override { noKernels(); }
  void scale(void*, size_t, DType, double) override { noKernels(); }
  void fillIdentity(void*, size_t, DType, ReduceOp) override { noKernels(); }
  void registerHostMemory(void*, size_t) override {}
  void unregisterHostMemory(void*) noexcept override {}
  DeviceHandles handles() const override { return {}; }

  int live() const { return live_; }

 private:
  [[noreturn]] static void noKernels() { throw InternalError("TestDevice has no kernels"); }

  DeviceKind kind_;
  int live_ = 0;
};

// A call frame over host arrays. Inputs, reads and updates point into arrays the test owns;
// outputs are allocated on `device` and freed with the frame.
class TestCallFrame final : public CallFrame {
 public:
  TestCallFrame(Device& device, const ModelSpec& spec, const std::string& function)
      : CallFrame(spec.functions.at(find(spec, function)).outputs), device_(device), spec_(spec) {
    this->function = find(spec, function);
    outputs_.resize(spec.functions[this->function].outputs.size());
  }
  ~TestCallFrame() override {
    for (const ArrayView& out : outputs_)
      device_.release(out.data());
  }
  TestCallFrame(const TestCallFrame&) = delete;
  TestCallFrame& operator=(const TestCallFrame&) = delete;

  static TensorRef ref(Array& array) { return {array.data(), array.dtype(), array.shape()}; }

  const ArrayView& result(int index) const { return outputs_.at(index); }

  int refuse_output = -1;  // allocate() throws for this index

 protected:
  void* allocate(int index, const Shape& shape) override {
    if (index == refuse_output) throw InvalidArgument("test frame refuses this output");
    const DType dtype = spec_.functions[function].outputs.at(index).dtype;
    void* data = device_.allocate(static_cast<size_t>(numElements(shape)) * dtypeSize(dtype));
    outputs_[index] = ArrayView(data, dtype, shape);
    return data;
  }

 private:
  static int find(const ModelSpec& spec, const std::string& function) {
    for (size_t i = 0; i < spec.functions.size(); ++i) {
      if (spec.functions[i].name == function) return static_cast<int>(i);
    }
    return 0;
  }

  Device& device_;
  const ModelSpec& spec_;
  std::vector<ArrayView> outputs_;
};

// Keeps every line plugins log.
struct LogRecorder {
  std::mutex mutex;
  std::vector<std::string> lines;

  auto sink() {
    return [this](int32_t, const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex);
      lines.push_back(line);
    };
  }
  bool contains(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string& line : lines) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

}  // namespace synk::testing
