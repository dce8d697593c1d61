#pragma once
// The device of the cpu backend: the host itself. Its memory is carved from the rank's
// shared-memory heap, so the shared-memory communicator reaches every rank's buffers without a
// copy; every operation completes before it returns.
#include "synk/core/device.h"

namespace synk {

class ShmHeap;

class HostDevice final : public Device {
 public:
  // `heap` must outlive the device.
  explicit HostDevice(ShmHeap& heap);

  DeviceKind kind() const override { return DeviceKind::Host; }
  int ordinal() const override { return -1; }
  std::string describe() const override { return "cpu"; }

  void* allocate(size_t bytes) override;
  void release(void* pointer) noexcept override;
  void copy(void* dst, const void* src, size_t bytes, CopyKind kind) override;
  void synchronize(Waiter& waiter) override;

  void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) override;
  void scale(void* buffer, size_t count, DType dtype, double factor) override;
  void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) override;

  void registerHostMemory(void*, size_t) override {}
  void unregisterHostMemory(void*) noexcept override {}
  DeviceHandles handles() const override { return {}; }

 private:
  ShmHeap& heap_;
};

}  // namespace synk
