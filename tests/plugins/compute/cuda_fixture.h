#pragma once
// What the compute library's GPU tests need: GPU 0 and a stream, device buffers filled from and
// read back into host vectors, and an sdk::Context whose allocator is cudaMalloc (for BlasHandle,
// GraphCache). Skips the test (exit 77) without a usable GPU.
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "synk/plugins/compute/cuda_resources.h"
#include "synk/plugins/compute/device.h"
#include "tests/support/rank_fixture.h"

namespace synk::compute::testing {

inline void cudaOk(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

inline std::vector<float> randomVector(size_t n, unsigned seed, float scale = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

// |got - want| <= tolerance (1 + |want|) elementwise.
inline void requireClose(const std::vector<float>& got, const std::vector<float>& want,
                         double tolerance) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::fabs(double(got[i]) - want[i]) <= tolerance * (1 + std::fabs(want[i])));
  }
}

class Gpu {
 public:
  Gpu() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      test::skipTest(status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device");
    }
    cudaOk(cudaSetDevice(0), "cudaSetDevice");
    cudaOk(cudaStreamCreate(&stream_), "cudaStreamCreate");
    info_.struct_size = sizeof info_;
    info_.kind = SYNK_DEVICE_CUDA;
    info_.ordinal = 0;
    info_.n_ranks = 1;
    info_.stream = stream_;
    services_.struct_size = sizeof services_;
    services_.host = this;
    services_.log = [](void*, int32_t, const char* message) {
      std::fprintf(stderr, "%s\n", message);
    };
    services_.allocate = [](void*, uint64_t bytes) -> void* {
      void* p = nullptr;
      return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
    };
    services_.release = [](void*, void* p) { cudaFree(p); };
    blas_ = std::make_unique<cuda::BlasHandle>(context(), stream_);
  }
  ~Gpu() {
    blas_.reset();
    for (void* p : buffers_)
      cudaFree(p);
    cudaStreamDestroy(stream_);
  }

  sdk::Context context() const { return sdk::Context(&info_, &services_, &options_); }
  Device device() const { return {true, stream_, blas_->get()}; }
  void* stream() const { return stream_; }

  template <typename T>
  T* upload(const std::vector<T>& host) {
    void* p = nullptr;
    cudaOk(cudaMalloc(&p, host.size() * sizeof(T) + 1), "cudaMalloc");
    buffers_.push_back(p);
    cudaOk(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
           "cudaMemcpy");
    return static_cast<T*>(p);
  }
  template <typename T>
  std::vector<T> download(const T* device, size_t count) {
    cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    std::vector<T> host(count);
    cudaOk(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
           "cudaMemcpy");
    return host;
  }

 private:
  cudaStream_t stream_ = nullptr;
  synk_device_info info_{};
  synk_host_services services_{};
  sdk::Options options_;
  std::unique_ptr<cuda::BlasHandle> blas_;
  std::vector<void*> buffers_;
};

}  // namespace synk::compute::testing
