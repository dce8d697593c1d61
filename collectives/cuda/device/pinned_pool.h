#pragma once
// Page-locked host memory for results the GPU copies to the host (Device::resultArray): gathered
// and reduced variables, function outputs. A device-to-host copy into pinned memory runs at full
// DMA speed (~55 GB/s on an H200 host); into pageable memory it goes through a bounce buffer and a
// memcpy at about a sixth of that, so the copy would cost more than the collective.
//
// Blocks are allocated with cudaHostAlloc once and reused: an Array holding one returns it here
// when dropped (on any thread, after the session too: each block keeps the pool alive), so a loop
// of gathers allocates nothing after its first call. cudaFreeHost waits for the whole device, so
// blocks are freed only past kCacheBytes, when the last holder lets go, and never after an abort
// (the process exits next; a hung GPU would hold the wait forever).
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "synk/core/array.h"

namespace synk {

class PinnedPool : public std::enable_shared_from_this<PinnedPool> {
 public:
  // Below this a result is a plain heap Array: a small pageable copy costs less than pinning.
  static constexpr size_t kMinBytes = size_t{64} << 10;
  // Free blocks kept for reuse, all sizes together.
  static constexpr size_t kCacheBytes = size_t{2} << 30;

  PinnedPool() = default;
  ~PinnedPool();
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // Storage of at least `bytes` (>= kMinBytes) that goes back to the pool when its last holder
  // lets go. Throws CudaError when cudaHostAlloc fails.
  ArrayStorage take(size_t bytes);
  // After an abort: never call CUDA again; blocks still held are leaked with the process.
  void abandon() noexcept { abandoned_.store(true, std::memory_order_relaxed); }

  // The block size a request of `bytes` gets: whole 64 KiB up to 1 MiB, powers of two to 64 MiB,
  // whole 64 MiB above (so similar sizes share blocks, and a block wastes at most half).
  static size_t blockBytes(size_t bytes);

 private:
  void give(std::byte* data, size_t bytes) noexcept;
  static void freeBlock(std::byte* data) noexcept;

  std::mutex mutex_;  // Arrays are dropped on whatever thread holds them
  std::multimap<size_t, std::byte*> free_;
  size_t cached_ = 0;
  std::atomic<bool> abandoned_{false};
};

}  // namespace synk
