#pragma once
// The raw CUDA and NCCL programs the call path and the results-to-the-master path are measured
// against (bench_cuda_call_path), run by the nccl_peer model on each rank's stream.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace nccl_peer {

// Per iteration: a 16-byte host-to-device copy from pinned memory, a 4-byte cudaMemsetAsync and
// a 4-byte device-to-host copy into pinned memory, then cudaStreamQuery until the stream is idle:
// what a function call with a small input and a scalar output must do on one GPU. Seconds per
// iteration.
double rawCallFloor(cudaStream_t stream, int iters);

// How raw_allreduce issues its in-place all_reduces (float32 sum on the session's communicator).
enum class RawMode : int32_t {
  Loop = 0,       // back to back, one synchronisation at the end (nccl-tests)
  SyncEach = 1,   // a stream synchronisation after each (a caller waiting for each result)
  GraphEach = 2,  // one all_reduce captured once in a CUDA graph, a cudaGraphLaunch per call
  OneGraph = 3,   // all `iters` captured in one graph, launched once: the device's time per call
  IssueOnly = 4,  // Loop, timed up to the last enqueue: the host's cost per call
};
// Seconds per all_reduce on this rank (after 5 untimed calls in the same mode).
double rawAllReduce(RawMode mode, ncclComm_t comm, cudaStream_t stream, void* buffer, size_t count,
                    int iters);

// What synk's results to the master are measured against, with the result copied into pinned
// host memory at the root and the stream synchronised each iteration. `count` floats of `buffer`
// per rank; seconds per iteration on this rank.
enum class ToMaster : int32_t { Reduce = 0, Gather = 1, GetFromRank1 = 2 };
double rawToMaster(ToMaster kind, ncclComm_t comm, cudaStream_t stream, const float* buffer,
                   size_t count, int iters);

}  // namespace nccl_peer
