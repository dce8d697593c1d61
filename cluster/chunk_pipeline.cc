#include "synk/cluster/chunk_pipeline.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "synk/core/error.h"

namespace synk::cluster {

ChunkPipeline::ChunkPipeline(Staging staging, size_t bytes, size_t chunk_bytes)
    : staging_(std::move(staging)),
      bytes_(bytes),
      chunk_bytes_(chunk_bytes),
      chunks_(chunk_bytes == 0 ? 0 : (bytes + chunk_bytes - 1) / chunk_bytes) {
  SYNK_CHECK(chunk_bytes_ > 0);
  SYNK_CHECK(staging_ != nullptr && staging_->size() >= bytes_);
}

size_t ChunkPipeline::length(size_t chunk) const {
  return std::min(chunk_bytes_, bytes_ - offset(chunk));
}

bool ChunkPipeline::step(const std::byte* in, std::byte* out) {
  const size_t filled = filled_.load(std::memory_order_relaxed);  // only this thread writes it
  if (filled < chunks_) {
    if (in == nullptr) {
      filled_.store(chunks_, std::memory_order_release);
    } else {
      std::memcpy(staging_->data() + offset(filled), in + offset(filled), length(filled));
      filled_.store(filled + 1, std::memory_order_release);
    }
    return true;
  }
  if (out == nullptr || copied_back_ == done_.load(std::memory_order_acquire)) return false;
  std::memcpy(out + offset(copied_back_), staging_->data() + offset(copied_back_),
              length(copied_back_));
  ++copied_back_;
  return true;
}

void ChunkPipeline::finish(std::byte* out) {
  SYNK_CHECK_EQ(done_.load(std::memory_order_acquire), chunks_);
  if (out == nullptr || copied_back_ == chunks_) return;
  // The rest in one copy.
  std::memcpy(out + offset(copied_back_), staging_->data() + offset(copied_back_),
              bytes_ - offset(copied_back_));
  copied_back_ = chunks_;
}

void ChunkPipeline::run(const std::function<void(std::byte* data, size_t bytes)>& work,
                        const char* what) {
  for (size_t c = 0; c < chunks_; ++c) {
    // The caller copies a chunk in a memcpy's time, fewer than the MPI work on the one before
    // takes: this rarely waits, and never for a caller that sleeps (step() fills first).
    while (filled_.load(std::memory_order_acquire) <= c &&
           !abandoned_.load(std::memory_order_acquire)) {
      sched_yield();
    }
    if (abandoned_.load(std::memory_order_acquire)) {
      throw UsageError(std::string(what) + ": its caller gave up before chunk " +
                       std::to_string(c) + " of " + std::to_string(chunks_));
    }
    work(staging_->data() + offset(c), length(c));
    done_.store(c + 1, std::memory_order_release);
  }
}

}  // namespace synk::cluster
