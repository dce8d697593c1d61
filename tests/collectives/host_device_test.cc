// HostDevice: heap memory, synchronous copies and the host kernels.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "synk/collectives/cpu/host_device.h"
#include "synk/core/control_block.h"
#include "synk/core/error.h"
#include "synk/core/shm_heap.h"
#include "synk/core/waiter.h"

namespace synk {
namespace {

// A heap with a fresh session prefix whose segments are removed when the test ends.
struct HeapGuard {
  std::string prefix = sessionShmPrefix(getpid(), randomToken());
  ShmHeap heap{prefix, 0};
  ~HeapGuard() { removeSegmentsWithPrefix(prefix); }
};

TEST_CASE("host device memory comes from the heap", "[coll]") {
  HeapGuard guard;
  HostDevice device(guard.heap);
  CHECK(device.kind() == DeviceKind::Host);
  CHECK(device.describe() == "cpu");
  CHECK(device.handles().stream == nullptr);
  std::set<void*> seen;
  for (size_t bytes : {0, 0, 1, 300, 4096}) {
    void* p = device.allocate(bytes);
    CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
    CHECK(guard.heap.locate(p).has_value());
    CHECK(seen.insert(p).second);
  }
  for (void* p : seen)
    device.release(p);
}

TEST_CASE("host device copies and kernels", "[coll]") {
  HeapGuard guard;
  HostDevice device(guard.heap);
  auto cb = std::make_unique<ControlBlock>();
  Waiter waiter(*cb, nullptr, Waiter::never(), "test");
  auto* a = static_cast<float*>(device.allocate(4 * sizeof(float)));
  auto* b = static_cast<float*>(device.allocate(4 * sizeof(float)));
  const std::vector<float> x = {1, 2, 3, 4};
  device.copy(a, x.data(), 16, CopyKind::HostToDevice);
  device.copy(b, a, 16, CopyKind::DeviceToDevice);
  device.accumulate(a, b, 4, DType::Float32, ReduceOp::Sum);
  device.scale(a, 4, DType::Float32, 0.5);
  std::vector<float> out(4);
  device.copy(out.data(), a, 16, CopyKind::DeviceToHost);
  device.synchronize(waiter);
  CHECK(out == x);
  device.fillIdentity(b, 4, DType::Float32, ReduceOp::Max);
  device.accumulate(b, a, 4, DType::Float32, ReduceOp::Max);
  device.copy(out.data(), b, 16, CopyKind::DeviceToHost);
  CHECK(out == x);
  CHECK_THROWS_AS(device.scale(a, 4, DType::Int32, 2.0), InvalidArgument);
  device.release(a);
  device.release(b);
}

TEST_CASE("host device synchronize notices an aborted session", "[coll]") {
  HeapGuard guard;
  HostDevice device(guard.heap);
  auto cb = std::make_unique<ControlBlock>();
  Waiter waiter(*cb, nullptr, Waiter::never(), "test");
  abortSession(*cb, AbortReason::PeerDied, 1, "rank 1 died");
  CHECK_THROWS_AS(device.synchronize(waiter), PeerFailure);
}

}  // namespace
}  // namespace synk
