#pragma once
// An owned, growable allocation from a memory source: a Device (DeviceBuffer, device_buffer.h)
// or a rank's shared-memory heap (HeapBuffer, heap_buffer.h). Anything with
// `void* allocate(size_t)` and `void release(void*) noexcept` serves.
#include <cstddef>
#include <utility>

namespace synk {

template <typename Source>
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  OwnedBuffer(Source& source, size_t bytes) { reserve(source, bytes); }
  OwnedBuffer(OwnedBuffer&& other) noexcept { swap(other); }
  OwnedBuffer& operator=(OwnedBuffer&& other) noexcept {
    OwnedBuffer(std::move(other)).swap(*this);
    return *this;
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  ~OwnedBuffer() {
    if (data_) source_->release(data_);
  }

  // Makes room for `bytes`; the contents are lost when the buffer grows.
  void reserve(Source& source, size_t bytes) {
    if (data_ && bytes <= capacity_) return;
    if (data_) source_->release(data_);
    data_ = nullptr;
    source_ = &source;
    data_ = source.allocate(bytes);
    capacity_ = bytes;
  }
  // Takes `data` (`capacity` bytes, from `source`) in place of what it held.
  void adopt(Source& source, void* data, size_t capacity) {
    if (data_) source_->release(data_);
    source_ = &source;
    data_ = data;
    capacity_ = capacity;
  }
  void swap(OwnedBuffer& other) noexcept {
    std::swap(source_, other.source_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  // Forgets the allocation without releasing it: left to the process exit (after an abort
  // nothing may wait on a device that may never finish).
  void abandon() noexcept {
    data_ = nullptr;
    capacity_ = 0;
  }
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  Source* source_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace synk
