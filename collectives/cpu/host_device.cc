#include "synk/collectives/cpu/host_device.h"

#include <cstring>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/shm_heap.h"
#include "synk/core/waiter.h"

namespace synk {

HostDevice::HostDevice(ShmHeap& heap) : heap_(heap) {}

void* HostDevice::allocate(size_t bytes) {
  return heap_.allocate(bytes);
}

void HostDevice::release(void* pointer) noexcept {
  if (releaseAdopted(pointer)) return;
  heap_.release(pointer);
}

void HostDevice::copy(void* dst, const void* src, size_t bytes, CopyKind) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

// Nothing is ever pending on the host; checking still lets a dead peer end a step that
// synchronizes in a loop.
void HostDevice::synchronize(Waiter& waiter) {
  waiter.check();
}

void HostDevice::accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) {
  host::accumulate(acc, x, count, dtype, op);
}

void HostDevice::scale(void* buffer, size_t count, DType dtype, double factor) {
  if (!isFloating(dtype)) {
    throw InvalidArgument(str("scale: dtype ", dtypeName(dtype), " is not floating-point"));
  }
  host::scaleCopy(buffer, buffer, count, dtype, factor);
}

void HostDevice::fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) {
  host::fillIdentity(buffer, count, dtype, op);
}

}  // namespace synk
