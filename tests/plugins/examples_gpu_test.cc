// The example models on CUDA (built only when synk found CUDA): tensors in GPU memory, kernels
// on the rank's stream. Without a usable GPU the [gpu] case is skipped, and a call on a cuda
// device must fail with CUDA's reason instead of crashing.
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "synk/plugins/host/dll_model_loader.h"
#include "tests/plugins/plugin_test_support.h"

namespace synk {
namespace {

using testing::pluginPath;
using testing::TestCallFrame;

void cudaCheck(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw CudaError(str(what, ": ", cudaGetErrorString(status)));
}

bool gpuPresent(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    *why = cudaGetErrorString(status);
  else if (count == 0)
    *why = "no CUDA device";
  return status == cudaSuccess && count > 0;
}

// GPU 0 with one stream: the minimum a model plugin needs from a cuda Device.
class CudaTestDevice final : public Device {
 public:
  CudaTestDevice() {
    cudaCheck(cudaSetDevice(0), "cudaSetDevice");
    cudaCheck(cudaStreamCreate(&stream_), "cudaStreamCreate");
  }
  ~CudaTestDevice() override { cudaStreamDestroy(stream_); }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  int ordinal() const override { return 0; }
  std::string describe() const override { return "cuda:0"; }
  void* allocate(size_t bytes) override {
    void* pointer = nullptr;
    cudaCheck(cudaMalloc(&pointer, bytes ? bytes : 1), "cudaMalloc");
    return pointer;
  }
  void release(void* pointer) noexcept override { cudaFree(pointer); }
  void copy(void* dst, const void* src, size_t bytes, CopyKind) override {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync");
  }
  void synchronize(Waiter&) override { finish(); }
  void accumulate(void*, const void*, size_t, DType, ReduceOp) override { noKernels(); }
  void scale(void*, size_t, DType, double) override { noKernels(); }
  void fillIdentity(void*, size_t, DType, ReduceOp) override { noKernels(); }
  void registerHostMemory(void*, size_t) override {}
  void unregisterHostMemory(void*) noexcept override {}
  DeviceHandles handles() const override { return {stream_, nullptr, nullptr}; }

  void finish() { cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  // A device copy of `array`, described by a TensorRef.
  TensorRef upload(const Array& array) {
    void* data = allocate(array.bytes());
    copy(data, array.data(), array.bytes(), CopyKind::HostToDevice);
    uploads_.push_back(data);
    return {data, array.dtype(), array.shape()};
  }
  Array download(const TensorRef& ref) {
    Array out(ref.dtype, ref.shape);
    copy(out.data(), ref.data, out.bytes(), CopyKind::DeviceToHost);
    finish();
    return out;
  }
  void releaseUploads() {
    for (void* pointer : uploads_)
      release(pointer);
    uploads_.clear();
  }

 private:
  [[noreturn]] static void noKernels() { throw InternalError("CudaTestDevice has no kernels"); }

  cudaStream_t stream_ = nullptr;
  std::vector<void*> uploads_;
};

TEST_CASE("the examples run on a GPU", "[gpu]") {
  std::string why;
  if (!gpuPresent(&why)) {
    std::printf("skipped: no usable GPU (%s)\n", why.c_str());
    std::exit(SYNK_SKIP_RETURN_CODE);
  }
  CudaTestDevice device;
  DllModelLoader loader;
  {
    auto model = loader.load(pluginPath("synk_example_intro"));
    auto instance = model->instantiate(RankInfo{0, 1, &device});
    TestCallFrame frame(device, model->spec(), "z");
    frame.inputs = {device.upload(Array::of<float>({3, 2}, {1, 2, 3, 4, 5, 6})),
                    device.upload(Array::vector<float>({1, -1}))};
    instance->call(frame);
    const ArrayView& z = frame.result(0);
    CHECK(device.download({z.data(), z.dtype(), z.shape()}).flat(0) == Approx(-1.0));
    device.releaseUploads();
  }
  {
    auto model = loader.load(pluginPath("synk_example_shared_variable"));
    auto instance = model->instantiate(RankInfo{0, 1, &device});
    TestCallFrame frame(device, model->spec(), "f");
    frame.inputs = {device.upload(Array::of<float>({2, 2}, {1, 1, 2, 2}))};
    frame.reads = {device.upload(Array::vector<float>({1, 1}))};
    frame.updates = {device.upload(Array::vector<float>({0, 0}))};
    instance->call(frame);
    CHECK(device.download(frame.updates[0]).toVector<float>() == std::vector<float>{3, 3});
    CHECK(device.download(frame.reads[0]).toVector<float>() == std::vector<float>{1, 1});
    device.releaseUploads();
  }
}

TEST_CASE("with no GPU a cuda call fails with CUDA's reason", "[plugins]") {
  std::string why;
  if (gpuPresent(&why)) {
    std::printf("skipped: a GPU is present (the [gpu] case covers it)\n");
    std::exit(SYNK_SKIP_RETURN_CODE);
  }
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_example_intro"));
  testing::TestDevice device(DeviceKind::Cuda);
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  Array x = Array::of<float>({1, 1}, {1});
  Array y = Array::vector<float>({1});
  TestCallFrame frame(device, model->spec(), "z");
  frame.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(y)};
  CHECK_THROWS_WITH(
      instance->call(frame),
      Catch::Contains("function 'z' failed: cannot run on cuda:0: ") && Catch::Contains(why));
}

}  // namespace
}  // namespace synk
