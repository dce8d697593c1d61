#include "synk/collectives/cuda/device/pinned_pool.h"

#include <cuda_runtime_api.h>

#include <bit>

#include "synk/collectives/cuda/device/cuda_check.h"
#include "synk/core/log.h"

namespace synk {

size_t PinnedPool::blockBytes(size_t bytes) {
  constexpr size_t kKiB64 = size_t{64} << 10, kMiB = size_t{1} << 20, kMiB64 = size_t{64} << 20;
  if (bytes <= kMiB) return std::max(kKiB64, (bytes + kKiB64 - 1) / kKiB64 * kKiB64);
  if (bytes <= kMiB64) return std::bit_ceil(bytes);
  return (bytes + kMiB64 - 1) / kMiB64 * kMiB64;
}

ArrayStorage PinnedPool::take(size_t bytes) {
  const size_t block = blockBytes(bytes);
  std::byte* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = free_.find(block);
    if (it != free_.end()) {
      data = it->second;
      free_.erase(it);
      cached_ -= block;
    }
  }
  if (data == nullptr) {
    void* fresh = nullptr;
    // cudaHostAlloc does not wait for the device (cudaFreeHost does).
    SYNK_CUDA_CHECK(cudaHostAlloc(&fresh, block, cudaHostAllocPortable));
    data = static_cast<std::byte*>(fresh);
  }
  std::shared_ptr<void> owner(data, [pool = shared_from_this(), block](void* p) {
    pool->give(static_cast<std::byte*>(p), block);
  });
  return ArrayStorage(data, bytes, std::move(owner));
}

void PinnedPool::give(std::byte* data, size_t bytes) noexcept {
  if (abandoned_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + bytes <= kCacheBytes) {
      try {
        free_.emplace(bytes, data);
        cached_ += bytes;
        return;
      } catch (...) {
        // no memory for the map node: free the block instead
      }
    }
  }
  freeBlock(data);
}

void PinnedPool::freeBlock(std::byte* data) noexcept {
  const cudaError_t err = cudaFreeHost(data);
  // At process exit the CUDA runtime may be gone before the last Array: nothing to free then.
  if (err != cudaSuccess && err != cudaErrorCudartUnloading) {
    logWarning("cudaFreeHost of a pinned result block failed: ", cudaGetErrorString(err));
  }
  if (err != cudaSuccess) (void)cudaGetLastError();
}

PinnedPool::~PinnedPool() {
  if (abandoned_.load(std::memory_order_relaxed)) return;
  for (const auto& [bytes, data] : free_)
    freeBlock(data);
}

}  // namespace synk
