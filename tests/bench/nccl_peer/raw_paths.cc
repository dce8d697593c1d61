#include "tests/bench/nccl_peer/raw_paths.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace nccl_peer {
namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
void check(ncclResult_t err, const char* what) {
  if (err != ncclSuccess)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(err));
}

void pollIdle(cudaStream_t stream) {
  cudaError_t state;
  while ((state = cudaStreamQuery(stream)) == cudaErrorNotReady) {
  }
  check(state, "cudaStreamQuery");
}

// Device and pinned buffers, freed on the way out.
struct Buffers {
  void* device = nullptr;
  void* pinned = nullptr;
  Buffers(size_t device_bytes, size_t pinned_bytes) {
    check(cudaMalloc(&device, device_bytes), "cudaMalloc");
    check(cudaMallocHost(&pinned, pinned_bytes), "cudaMallocHost");
  }
  ~Buffers() {
    cudaFree(device);
    cudaFreeHost(pinned);
  }
};

}  // namespace

double rawCallFloor(cudaStream_t stream, int iters) {
  Buffers b(256, 64);
  auto* in = static_cast<char*>(b.pinned);
  auto* out = static_cast<char*>(b.pinned) + 32;
  auto once = [&] {
    check(cudaMemcpyAsync(b.device, in, 16, cudaMemcpyHostToDevice, stream), "h2d");
    check(cudaMemsetAsync(static_cast<char*>(b.device) + 128, 0, 4, stream), "memset");
    check(
        cudaMemcpyAsync(out, static_cast<char*>(b.device) + 128, 4, cudaMemcpyDeviceToHost, stream),
        "d2h");
    pollIdle(stream);
  };
  for (int i = 0; i < 100; ++i)
    once();
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i)
    once();
  return std::chrono::duration<double>(Clock::now() - start).count() / iters;
}

double rawToMaster(ToMaster kind, ncclComm_t comm, cudaStream_t stream, const float* buffer,
                   size_t count, int iters) {
  int rank = 0, n = 0;
  check(ncclCommUserRank(comm, &rank), "ncclCommUserRank");
  check(ncclCommCount(comm, &n), "ncclCommCount");
  const size_t bytes = count * sizeof(float);
  const size_t result = kind == ToMaster::Gather ? bytes * static_cast<size_t>(n) : bytes;
  Buffers b(result, rank == 0 ? result : 1);
  auto* recv = static_cast<char*>(b.device);
  auto once = [&] {
    switch (kind) {
      case ToMaster::Reduce:
        check(ncclReduce(buffer, recv, count, ncclFloat, ncclSum, 0, comm, stream), "ncclReduce");
        break;
      case ToMaster::Gather:
        check(ncclGroupStart(), "ncclGroupStart");
        if (rank == 0) {
          check(cudaMemcpyAsync(recv, buffer, bytes, cudaMemcpyDeviceToDevice, stream), "own");
          for (int r = 1; r < n; ++r) {
            check(
                ncclRecv(recv + bytes * static_cast<size_t>(r), count, ncclFloat, r, comm, stream),
                "ncclRecv");
          }
        } else {
          check(ncclSend(buffer, count, ncclFloat, 0, comm, stream), "ncclSend");
        }
        check(ncclGroupEnd(), "ncclGroupEnd");
        break;
      case ToMaster::GetFromRank1:
        if (rank == 0) check(ncclRecv(recv, count, ncclFloat, 1, comm, stream), "ncclRecv");
        if (rank == 1) check(ncclSend(buffer, count, ncclFloat, 0, comm, stream), "ncclSend");
        break;
    }
    if (rank == 0) {
      check(cudaMemcpyAsync(b.pinned, recv, result, cudaMemcpyDeviceToHost, stream), "d2h");
    }
    check(cudaStreamSynchronize(stream), "sync");
  };
  for (int i = 0; i < 3; ++i)
    once();  // connects the peers (send/recv), warms the copies
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i)
    once();
  return std::chrono::duration<double>(Clock::now() - start).count() / iters;
}

namespace {

// The communicator handed to plugins is blocking, but a call may still answer ncclInProgress.
void enqueued(ncclComm_t comm, ncclResult_t result) {
  while (result == ncclInProgress)
    ncclCommGetAsyncError(comm, &result);
  check(result, "ncclAllReduce");
}

// A graph of `calls` all_reduces, captured on `stream` (nothing runs until it is launched). The
// instantiated graph goes with its holder, also when a timed call throws; a throw while capturing
// still leaves the stream capturing (benchmark code: the process then ends).
struct GraphExecDestroy {
  void operator()(cudaGraphExec_t exec) const { cudaGraphExecDestroy(exec); }
};
using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDestroy>;

GraphExec captureAllReduces(ncclComm_t comm, cudaStream_t stream, void* buffer, size_t count,
                            int calls) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < calls; ++i)
    enqueued(comm, ncclAllReduce(buffer, buffer, count, ncclFloat, ncclSum, comm, stream));
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(made, "cudaGraphInstantiate");
  return GraphExec(exec);
}

}  // namespace

double rawAllReduce(RawMode mode, ncclComm_t comm, cudaStream_t stream, void* buffer, size_t count,
                    int iters) {
  GraphExec exec;
  if (mode == RawMode::GraphEach) exec = captureAllReduces(comm, stream, buffer, count, 1);
  if (mode == RawMode::OneGraph) exec = captureAllReduces(comm, stream, buffer, count, iters);
  auto issue = [&] {
    if (exec) return check(cudaGraphLaunch(exec.get(), stream), "cudaGraphLaunch");
    enqueued(comm, ncclAllReduce(buffer, buffer, count, ncclFloat, ncclSum, comm, stream));
    if (mode == RawMode::SyncEach) check(cudaStreamSynchronize(stream), "sync");
  };
  for (int i = 0; i < 5; ++i)
    issue();
  check(cudaStreamSynchronize(stream), "warm-up");
  const auto start = Clock::now();
  const int launches = mode == RawMode::OneGraph ? 1 : iters;
  for (int i = 0; i < launches; ++i)
    issue();
  const auto issued = Clock::now();
  check(cudaStreamSynchronize(stream), "loop");
  const auto end = mode == RawMode::IssueOnly ? issued : Clock::now();
  return std::chrono::duration<double>(end - start).count() / iters;
}

}  // namespace nccl_peer
