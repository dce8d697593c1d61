#include "synk/collectives/cuda/device/pinned_bounce.h"

#include <algorithm>
#include <cstring>

#include "synk/collectives/cuda/device/cuda_check.h"
#include "synk/core/log.h"

namespace synk {
namespace {

// Whole MiBs (whole 64 MiBs above that) so buffers are reused across similar sizes.
size_t roundUp(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t unit = bytes <= 64 * kMiB ? kMiB : 64 * kMiB;
  return std::max<size_t>(kMiB, (bytes + unit - 1) / unit * unit);
}

}  // namespace

PinnedBounce::~PinnedBounce() {
  if (abandoned_) return;
  for (auto* list : {&free_, &busy_}) {
    for (const Buffer& buffer : *list) {
      const cudaError_t err = cudaFreeHost(buffer.data);
      if (err != cudaSuccess) {
        logWarning("cudaFreeHost of a bounce buffer failed: ", cudaGetErrorString(err));
      }
    }
  }
}

void* PinnedBounce::take(size_t bytes) {
  constexpr size_t kAlign = 256;
  if (bytes <= kSmallBytes && slab_.data != nullptr && slab_used_ + bytes <= slab_.bytes) {
    void* data = static_cast<char*>(slab_.data) + slab_used_;
    slab_used_ += (bytes + kAlign - 1) / kAlign * kAlign;
    return data;
  }
  // Smallest free buffer that fits.
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
  }
  Buffer buffer;
  if (best != free_.end()) {
    buffer = *best;
    free_.erase(best);
  } else {
    buffer.bytes = roundUp(bytes);
    // cudaHostAlloc does not wait for the device (cudaFreeHost does: see recycle()).
    SYNK_CUDA_CHECK(cudaHostAlloc(&buffer.data, buffer.bytes, cudaHostAllocPortable));
  }
  busy_.push_back(buffer);
  if (bytes <= kSmallBytes) {  // the new buffer becomes the slab for the next small copies
    slab_ = buffer;
    slab_used_ = (bytes + kAlign - 1) / kAlign * kAlign;
  }
  return buffer.data;
}

void* PinnedBounce::stageIn(const void* src, size_t bytes) {
  void* data = take(bytes);
  std::memcpy(data, src, bytes);
  return data;
}

void* PinnedBounce::stageOut(void* dst, size_t bytes) {
  void* data = take(bytes);
  pending_.push_back({dst, data, bytes});
  return data;
}

void PinnedBounce::complete() {
  for (const Pending& p : pending_)
    std::memcpy(p.dst, p.src, p.bytes);
  pending_.clear();
  recycle();
}

void PinnedBounce::recycle() {
  free_.insert(free_.end(), busy_.begin(), busy_.end());
  busy_.clear();
  slab_ = Buffer{};
  slab_used_ = 0;
  // Keep the smallest buffers up to kKeepBytes; free the rest. The stream is idle here, so
  // cudaFreeHost's implicit synchronisation has nothing to wait for.
  std::sort(free_.begin(), free_.end(),
            [](const Buffer& a, const Buffer& b) { return a.bytes < b.bytes; });
  size_t kept = 0;
  auto it = free_.begin();
  while (it != free_.end() && kept + it->bytes <= kKeepBytes) {
    kept += it->bytes;
    ++it;
  }
  for (auto drop = it; drop != free_.end(); ++drop) {
    const cudaError_t err = cudaFreeHost(drop->data);
    if (err != cudaSuccess) {
      logWarning("cudaFreeHost of a bounce buffer failed: ", cudaGetErrorString(err));
    }
  }
  free_.erase(it, free_.end());
}

}  // namespace synk
