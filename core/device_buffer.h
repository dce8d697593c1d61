#pragma once
// An owned, growable allocation of device memory (core/device.h).
#include <cstddef>
#include <utility>

#include "synk/core/device.h"

namespace synk {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& device, size_t bytes) : device_(&device) { reserve(device, bytes); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) device_->release(data_);
  }

  // Makes room for `bytes`; the contents are lost when the buffer grows.
  void reserve(Device& device, size_t bytes) {
    if (data_ && bytes <= capacity_) return;
    if (data_) device_->release(data_);
    data_ = nullptr;
    device_ = &device;
    data_ = device.allocate(bytes);
    capacity_ = bytes;
  }
  void swap(DeviceBuffer& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  Device* device_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace synk
