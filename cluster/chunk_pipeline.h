// A collective on host memory run chunk by chunk between its caller and the thread that calls MPI
// (cluster/README.md, "one rank per node"), so that the caller's copies hide under MPI: the caller
// copies chunk c + 1 into the staging buffer while the MPI thread works on chunk c in place, and
// copies chunk c - 1's result back meanwhile.
//
// The pipeline (its staging buffer and its counters) is co-owned by the caller and the job (a
// shared_ptr each). The job touches only the staging buffer and the counters; every read of the
// caller's input and every write into the caller's output is made on the caller's thread, while it
// waits, before it returns. A caller that gives up (its deadline passed, the session was aborted:
// abandon()) therefore leaves nothing that can write into its memory: the job, which may still be
// inside MPI with a chunk of the staging buffer, stops at its next chunk.
//
// Chunks split `bytes` at multiples of `chunk_bytes` (a multiple of the element size, so every
// chunk holds whole elements); the last may be shorter. Each chunk is the same operation as the
// whole (an all-reduce, a broadcast, ...) on fewer elements: where that operation is element-wise
// (every one here), the results are the whole's bits.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace synk::cluster {

class ChunkPipeline {
 public:
  using Staging = std::shared_ptr<std::vector<std::byte>>;
  // `staging` must hold at least `bytes`; chunk_bytes > 0.
  ChunkPipeline(Staging staging, size_t bytes, size_t chunk_bytes);

  size_t chunks() const { return chunks_; }

  // The caller's side. One piece of its work: the next chunk of `in` copied into the staging
  // buffer, else the next chunk the job finished copied into `out`; false when neither can be
  // done now. `in` nullptr: nothing to copy in (every chunk is ready for the job: a broadcast's
  // other nodes); `out` nullptr: nothing to copy back (a reduce's other nodes). Chunks go in first:
  // the job never waits for one while the caller could give it.
  bool step(const std::byte* in, std::byte* out);
  // After the job ended well: the chunks not yet copied back into `out` (nullptr: none).
  void finish(std::byte* out);
  // The caller gave up: the job stops before its next chunk (it throws UsageError naming `what`).
  void abandon() { abandoned_.store(true, std::memory_order_release); }

  // The job's side, on the MPI thread: work(data, bytes) on each chunk of the staging buffer, in
  // order, each once the caller has copied it in.
  void run(const std::function<void(std::byte* data, size_t bytes)>& work, const char* what);

  // Chunks the caller copied in / the job finished / the caller copied back (for tests).
  size_t filled() const { return filled_.load(std::memory_order_acquire); }
  size_t done() const { return done_.load(std::memory_order_acquire); }
  size_t copiedBack() const { return copied_back_; }

 private:
  size_t offset(size_t chunk) const { return chunk * chunk_bytes_; }
  size_t length(size_t chunk) const;

  Staging staging_;
  size_t bytes_;
  size_t chunk_bytes_;
  size_t chunks_;
  std::atomic<size_t> filled_{0};  // written by the caller, read by the job
  std::atomic<size_t> done_{0};    // written by the job, read by the caller
  std::atomic<bool> abandoned_{false};
  size_t copied_back_ = 0;  // the caller's own
};

}  // namespace synk::cluster
