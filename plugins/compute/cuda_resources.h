#pragma once
// What the CUDA side of a model owns beyond the host's handles: a cuBLAS handle on a stream of
// its choice (with a workspace from the host allocator, so a captured graph never allocates),
// streams and events to order work across them, and a cache of captured CUDA graphs. Built from
// cuda/cuda_resources.cc with CUDA, cuda/cuda_unavailable.cc without (every constructor then throws
// Unsupported). Create them in the model's constructor (after fork), never in describe.
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <vector>

#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::compute::cuda {

class BlasHandle {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS' advice for Hopper
  // Enough for what a handle does beside cuBLASLt (gemm.h: only k = 0, a scaling of C).
  static constexpr size_t kSmallWorkspaceBytes = size_t{1} << 20;
  BlasHandle(const sdk::Context& context, void* stream,
             size_t workspace_bytes = kWorkspaceBytes);
  ~BlasHandle();
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  void* get() const { return handle_; }  // cublasHandle_t

 private:
  sdk::Context context_;
  void* handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_;
};

// A non-blocking stream (it does not synchronise with the legacy default stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* get() const { return stream_; }  // cudaStream_t

 private:
  void* stream_ = nullptr;
};

// An event without timing, to order one stream after another's work so far.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(void* stream);
  // `stream`'s later work waits for what the event recorded.
  void makeWait(void* stream) const;

 private:
  void* event_ = nullptr;
};

// Replays a repeated sequence of launches as one CUDA graph. run(key, stream, body): the first
// time a key is seen, body runs as is (a warm-up: cuBLAS picks its kernels, buffers exist); the
// second time it is captured on `stream` and the graph launched; afterwards only launched. The key
// must name everything the launches bake in: every pointer and size. Least recently used graphs
// beyond `capacity` are destroyed. If a capture fails, graphs are switched off for good (logged)
// and body runs directly.
class GraphCache {
 public:
  GraphCache(const sdk::Context& context, size_t capacity);
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  void run(const std::vector<uint64_t>& key, void* stream, const std::function<void()>& body);
  void clear();
  uint64_t launches() const { return launches_; }  // graph launches so far
  uint64_t captures() const { return captures_; }

 private:
  struct Entry {
    std::vector<uint64_t> key;
    void* exec = nullptr;  // cudaGraphExec_t
  };
  sdk::Context context_;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  bool enabled_ = true;
  uint64_t launches_ = 0;
  uint64_t captures_ = 0;
};

}  // namespace synk::compute::cuda
