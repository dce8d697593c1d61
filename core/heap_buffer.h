#pragma once
// An owned, growable allocation from a rank's shared-memory heap: host staging memory (pinned
// on the cuda backend, since the backend registers every heap segment).
#include <cstddef>
#include <utility>

#include "synk/core/shm_heap.h"

namespace synk {

class HeapBuffer {
 public:
  HeapBuffer() = default;
  HeapBuffer(HeapBuffer&& other) noexcept { swap(other); }
  HeapBuffer& operator=(HeapBuffer&& other) noexcept {
    HeapBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~HeapBuffer() {
    if (data_) heap_->release(data_);
  }
  // Makes room for `bytes`; contents are lost when it grows.
  void reserve(ShmHeap& heap, size_t bytes) {
    if (data_ && bytes <= capacity_) return;
    if (data_) heap_->release(data_);
    data_ = nullptr;
    heap_ = &heap;
    data_ = heap.allocate(bytes);
    capacity_ = bytes;
  }
  void swap(HeapBuffer& other) noexcept {
    std::swap(heap_, other.heap_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  void* data() const { return data_; }

 private:
  ShmHeap* heap_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace synk
