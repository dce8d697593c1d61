#pragma once
// Where a model's math runs: the host, or one GPU through a stream and a cuBLAS handle. Every op
// of the compute library (plugins/compute/) takes a Device and dispatches: a host loop, tested
// in CI, or a CUDA kernel / cuBLAS call enqueued on the stream, tested against the host version
// by the gpu-labelled tests. See plugins/compute/README.md.
#include <cstddef>
#include <cstdint>
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::compute {

// GEMM arithmetic on CUDA: fp32, or tensor cores with tf32 / bf16 inputs and fp32 accumulation
// (cuBLAS' CUBLAS_COMPUTE_32F_FAST_*). The host always computes in fp32.
enum class Precision { Fp32, Tf32, Bf16 };
Precision parsePrecision(const std::string& name);  // "fp32", "tf32", "bf16"
const char* precisionName(Precision precision);

struct Device {
  bool cuda = false;
  void* stream = nullptr;  // cudaStream_t every op is enqueued on
  void* blas = nullptr;    // cublasHandle_t bound to `stream` (see BlasHandle)
  // GEMMs through cuBLASLt: a cuda::LtMatmul (gemm_lt.h); null: cublasGemmEx on `blas`.
  void* lt = nullptr;
};

// The host device.
inline Device hostDevice() {
  return {};
}

// Grow-only memory of the rank's device from the host's allocator (sdk::Context::allocate):
// host memory on cpu ranks (shared memory, so collectives can reach it), GPU memory on cuda. A
// grow invalidates earlier pointers and bumps generation(), which a cache of captured CUDA graphs
// keys on.
class Workspace {
 public:
  explicit Workspace(const sdk::Context& context) : context_(context) {}
  ~Workspace() { context_.release(data_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // At least `bytes` bytes (256-aligned). Contents are lost when it grows.
  void* reserve(size_t bytes) {
    if (bytes <= bytes_ && data_) return data_;
    context_.release(data_);
    data_ = nullptr;
    bytes_ = 0;
    data_ = context_.allocate(bytes ? bytes : 1);
    bytes_ = bytes;
    ++generation_;
    return data_;
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  uint64_t generation() const { return generation_; }

 private:
  sdk::Context context_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  uint64_t generation_ = 0;
};

// Carves aligned pieces out of one block: first a dry run to size the block, then the real one.
class Carver {
 public:
  explicit Carver(void* base = nullptr) : base_(static_cast<std::byte*>(base)) {}
  template <typename T>
  T* take(int64_t count) {
    const size_t at = used_;
    used_ += (static_cast<size_t>(count) * sizeof(T) + 255) / 256 * 256;
    return base_ ? reinterpret_cast<T*>(base_ + at) : nullptr;
  }
  size_t used() const { return used_; }

 private:
  std::byte* base_;
  size_t used_ = 0;
};

}  // namespace synk::compute
