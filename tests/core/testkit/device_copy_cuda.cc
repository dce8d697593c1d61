#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "tests/core/testkit/device_copy.h"

namespace testkit {
namespace {

void copy(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes,
          cudaMemcpyKind kind) {
  if (!bytes) return;
  if (!context.isCuda()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto stream = static_cast<cudaStream_t>(context.stream());
  cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    throw synk::sdk::Error(synk::sdk::Status::Device,
                           std::string("testkit copy: ") + cudaGetErrorString(err));
  }
}

}  // namespace

void toHost(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes) {
  copy(context, dst, src, bytes, cudaMemcpyDeviceToHost);
}

void toDevice(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes) {
  copy(context, dst, src, bytes, cudaMemcpyHostToDevice);
}

void zero(const synk::sdk::Context& context, void* dst, size_t bytes) {
  if (!bytes) return;
  if (!context.isCuda()) {
    std::memset(dst, 0, bytes);
    return;
  }
  const cudaError_t err =
      cudaMemsetAsync(dst, 0, bytes, static_cast<cudaStream_t>(context.stream()));
  if (err != cudaSuccess) {
    throw synk::sdk::Error(synk::sdk::Status::Device,
                           std::string("testkit zero: ") + cudaGetErrorString(err));
  }
}

}  // namespace testkit
