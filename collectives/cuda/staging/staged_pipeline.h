#pragma once
// The host-staged all_reduce of large buffers, pipelined: no NCCL, the data crosses the host's
// shared memory, and the copies out, the reduction and the copies back overlap chunk by chunk.
//
// Each rank owns an even, cache-line aligned share of every chunk (the shared-memory
// communicator's split). Per chunk, on every rank r:
//   1. copy out (device -> own staging) the parts of the chunk the other ranks own;
//   2. barrier: every rank's chunk is staged;
//   3. reduce its own part on the GPU, in rank order: rank 0's values (copied in from rank 0's
//      staging, or its own buffer), then each next rank's accumulated with the device kernels,
//      which reproduce the host kernels bit for bit (the same arithmetic as the shared-memory
//      reduction, so results are identical to the unpipelined path); avg then scales once;
//      the result goes back into its buffer and out into every peer's staging;
//   4. barrier: every part's result is in every staging buffer;
//   5. copy in the other ranks' results from its own staging.
// Every chunk's copies out are queued at once on one stream, each part's results go out on a
// second, the reduction and copies in run on a third, and the host keeps one chunk ahead, so the
// copies out of later chunks overlap the reduction and copies in of earlier ones. Per rank 2 S
// (n-1)/n bytes cross the host link each way (the peers' parts and this part's results out; the
// peers' values for this part and their results in), both directions at once, and no CPU core
// touches the data: the unpipelined path copies S each way one after the other around a reduction
// by one core.
//
// Peers' staging buffers (their heap segments) are mapped into this process and registered
// with CUDA once, so copies to and from them are DMA at full speed.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <set>
#include <vector>

#include "synk/core/communicator.h"
#include "synk/core/device_buffer.h"
#include "synk/core/shm_heap.h"

namespace synk {

class CudaDevice;
class ProcessGroup;
class Waiter;

class StagedAllReduce {
 public:
  // Buffers at least this large take the pipeline; smaller ones gain nothing from it.
  static constexpr size_t kMinBytes = size_t{4} << 20;

  StagedAllReduce(ProcessGroup& group, ShmHeap& heap, CudaDevice& device);
  ~StagedAllReduce();
  StagedAllReduce(const StagedAllReduce&) = delete;
  StagedAllReduce& operator=(const StagedAllReduce&) = delete;

  // All-reduces into args.buffer (from args.send when set, else in place) through `staging` (this
  // rank's heap memory of at least the buffer's bytes, pinned). Every rank calls it with matching
  // arguments (checked by the caller); `staging_ok` false on a rank that could not provide staging
  // makes every rank throw. The result's last copies are left in flight, ordered before later work
  // on the device's stream.
  void run(const AllReduceArgs& args, void* staging, bool staging_ok, Waiter& waiter);

  // The chunk size for `bytes` (a multiple of 64 bytes, 1 to 64 MiB). Each chunk costs a fixed
  // ~30 us (two barriers, the host waiting on its events: measured on 2 x H200, 2026-11-26) and
  // the pipeline's fill and drain grow with the chunk, so the best chunk grows as the square root
  // of the buffer: sqrt(bytes x kChunkScale) (8 MiB chunks at 32 MiB, ~23 MiB at 256 MiB, two
  // chunks at 8 MiB). `chunks` > 0 cuts the buffer into that many instead.
  static size_t chunkBytes(size_t bytes, size_t chunks = 0);
  static constexpr size_t kChunkScale = size_t{2} << 20;
  // SYNK_STAGED_CHUNKS: a fixed chunk count (1 to 256) for tuning on another host, read once per
  // process (a node's ranks inherit their launcher's; staging never crosses nodes); 0 when unset:
  // the square-root rule. A bad value is an InvalidArgument naming the variable, thrown when the
  // backend starts.
  static size_t chunkOverride();

 private:
  void ensureScratch(size_t bytes);
  // Maps and registers (once) the heap segment holding a peer's published staging location.
  std::byte* peerStaging(const ShmLocation& location);
  void waitFor(cudaEvent_t event, Waiter& waiter, const char* what);
  cudaEvent_t event(size_t index);

  ProcessGroup& group_;
  ShmHeap& heap_;
  CudaDevice& device_;
  int rank_;
  int n_;
  cudaStream_t out_ = nullptr;       // copies out: device -> own staging
  cudaStream_t results_ = nullptr;   // this part's results: device -> peers' staging
  cudaStream_t in_ = nullptr;        // reduction kernels and copies in
  std::vector<cudaEvent_t> events_;  // reused across calls, grown on demand
  DeviceBuffer acc_;                 // device scratch: one chunk's owned part, and a peer's
  DeviceBuffer part_;
  std::set<const void*> registered_;  // peer segment bases registered with CUDA
};

}  // namespace synk
