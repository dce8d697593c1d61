// The peer synk's CUDA collectives are measured against, run inside the same session on the
// same communicator: each rank loops raw ncclAllReduce on its stream (as nccl-tests does) and
// reports the time per operation. Also a no-op function with a scattered input, to time the
// host-to-device scatter of a Data input; the trivial call and its raw CUDA floor; and raw NCCL
// results to the master (raw_paths.h).
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"
#include "tests/bench/nccl_peer/raw_paths.h"

namespace sdk = synk::sdk;
using sdk::DType;

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw sdk::Error(sdk::Status::Device, std::string(what) + ": " + cudaGetErrorString(err));
  }
}

class NcclPeer {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("nccl_peer");
    spec.variable("buf", DType::Float32, {1});
    // mode (RawMode): how the loop issues its all_reduces.
    spec.function("raw_allreduce")
        .input("iters", DType::Int32, 0)
        .input("mode", DType::Int32, 0)
        .read("buf")
        .output("seconds", DType::Float64, 0);
    spec.function("touch").input("x", DType::Float32, 2).output("z", DType::Float32, 0);
    spec.function("sync").output("z", DType::Float32, 0);
    // The scatter's peer: every rank copies `bytes` from its own cudaMallocHost buffer at once.
    spec.function("raw_h2d").input("bytes", DType::Int64, 0).output("seconds", DType::Float64, 0);
    // The trivial call (a 4-byte cudaMemsetAsync of its output) and its raw floor.
    spec.function("noop").input("x", DType::Float32, 2).output("z", DType::Float32, 0);
    spec.function("raw_floor").input("iters", DType::Int32, 0).output("seconds", DType::Float64, 0);
    // kind: nccl_peer::ToMaster; buf's elements per rank.
    spec.function("raw_to_master")
        .input("kind", DType::Int32, 0)
        .input("iters", DType::Int32, 0)
        .read("buf")
        .output("seconds", DType::Float64, 0);
    return spec;
  }

  explicit NcclPeer(const sdk::Context& context) : context_(context) {
    if (!context.isCuda() || !context.comm()) {
      throw sdk::Error(sdk::Status::Unsupported, "nccl_peer needs the cuda backend with NCCL");
    }
  }

  void call(std::string_view name, sdk::Call& call) {
    auto stream = static_cast<cudaStream_t>(context_.stream());
    if (name == "touch" || name == "sync") {
      float zero = 0;
      check(cudaMemcpyAsync(call.output(0, {}).data(), &zero, sizeof zero, cudaMemcpyHostToDevice,
                            stream),
            "touch");
      check(cudaStreamSynchronize(stream), "touch");
      return;
    }
    if (name == "raw_h2d") return rawH2d(call, stream);
    if (name == "noop") {
      check(cudaMemsetAsync(call.output(0, {}).data(), 0, sizeof(float), stream), "noop");
      return;
    }
    if (name == "raw_floor") {
      const double seconds = nccl_peer::rawCallFloor(stream, scalarOf<int32_t>(call, 0, stream));
      return emitSeconds(call, seconds, stream);
    }
    if (name == "raw_to_master") {
      const auto kind = static_cast<nccl_peer::ToMaster>(scalarOf<int32_t>(call, 0, stream));
      const int iters = scalarOf<int32_t>(call, 1, stream);
      const double seconds =
          nccl_peer::rawToMaster(kind, static_cast<ncclComm_t>(context_.comm()), stream,
                                 static_cast<const float*>(call.read(0).data()),
                                 static_cast<size_t>(call.read(0).size()), iters);
      return emitSeconds(call, seconds, stream);
    }
    const int32_t iters = scalarOf<int32_t>(call, 0, stream);
    const auto mode = static_cast<nccl_peer::RawMode>(scalarOf<int32_t>(call, 1, stream));
    auto comm = static_cast<ncclComm_t>(context_.comm());
    // In place on the variable's memory: the values are irrelevant to the timing.
    void* buffer = const_cast<void*>(call.read(0).data());
    const size_t count = static_cast<size_t>(call.read(0).size());
    const double seconds = nccl_peer::rawAllReduce(mode, comm, stream, buffer, count, iters);
    emitSeconds(call, seconds, stream);
  }

 private:
  // A scalar input, read on the host (its copy was queued on the rank's stream).
  template <typename T>
  static T scalarOf(sdk::Call& call, int index, cudaStream_t stream) {
    T value{};
    check(cudaMemcpyAsync(&value, call.input(index).data(), sizeof value, cudaMemcpyDeviceToHost,
                          stream),
          "scalar input");
    check(cudaStreamSynchronize(stream), "scalar input");
    return value;
  }
  static void emitSeconds(sdk::Call& call, double seconds, cudaStream_t stream) {
    check(cudaMemcpyAsync(call.output(0, {}).data(), &seconds, sizeof seconds,
                          cudaMemcpyHostToDevice, stream),
          "seconds");
    check(cudaStreamSynchronize(stream), "seconds");
  }

  void rawH2d(sdk::Call& call, cudaStream_t stream) {
    int64_t bytes = 0;
    check(
        cudaMemcpyAsync(&bytes, call.input(0).data(), sizeof bytes, cudaMemcpyDeviceToHost, stream),
        "bytes");
    check(cudaStreamSynchronize(stream), "bytes");
    if (bytes != pinned_bytes_) {
      if (pinned_) cudaFreeHost(pinned_);
      if (device_) cudaFree(device_);
      check(cudaMallocHost(&pinned_, size_t(bytes)), "cudaMallocHost");
      check(cudaMalloc(&device_, size_t(bytes)), "cudaMalloc");
      std::memset(pinned_, 1, size_t(bytes));  // fault the pages in before timing
      pinned_bytes_ = bytes;
    }
    check(cudaMemcpyAsync(device_, pinned_, size_t(bytes), cudaMemcpyHostToDevice, stream), "warm");
    check(cudaStreamSynchronize(stream), "warm");
    const auto start = std::chrono::steady_clock::now();
    check(cudaMemcpyAsync(device_, pinned_, size_t(bytes), cudaMemcpyHostToDevice, stream), "h2d");
    check(cudaStreamSynchronize(stream), "h2d");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    check(cudaMemcpyAsync(call.output(0, {}).data(), &seconds, sizeof seconds,
                          cudaMemcpyHostToDevice, stream),
          "seconds");
    check(cudaStreamSynchronize(stream), "seconds");
  }

  sdk::Context context_;
  void* pinned_ = nullptr;
  void* device_ = nullptr;
  int64_t pinned_bytes_ = 0;
};

}  // namespace

SYNK_PLUGIN(NcclPeer)
