#pragma once
// The compute device one rank owns: the host (CPU backend) or one GPU (CUDA backend).
//
// A Device is created in its rank's process after fork (never before: CUDA must not be
// initialised in a process that forks). Device memory is what shared variables, function outputs
// and slice accumulators live in. On the host device it is carved from the rank's shared-memory
// heap (core/shm_heap.h), so the shared-memory collectives can read and write it from other ranks.
//
// Ordering: every operation is ordered after the previous ones issued to the same Device (one
// CUDA stream). Work may still run when a call returns: host memory written by a device-to-host
// copy, and host memory read by a host-to-device copy, may be touched by the host only after
// synchronize() returns. On the host device everything completes before the call returns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "synk/core/array.h"
#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk {

class Waiter;

enum class DeviceKind { Host = 0, Cuda = 1 };

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

// Opaque handles a model plugin may use on this rank (all null on the host device).
struct DeviceHandles {
  void* stream = nullptr;  // cudaStream_t the rank's work is ordered on
  void* blas = nullptr;    // cublasHandle_t bound to that stream
  void* comm = nullptr;    // ncclComm_t of the session, when NCCL is in use
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  // GPU ordinal as CUDA numbers it in this process; -1 for the host.
  virtual int ordinal() const = 0;
  // For logs and messages: "cpu", "cuda:1 (NVIDIA H200)".
  virtual std::string describe() const = 0;
  bool isHost() const { return kind() == DeviceKind::Host; }

  // Device memory, 256-byte aligned; allocate(0) returns a valid unique pointer.
  // Throws SystemError/CudaError when memory is exhausted.
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* pointer) noexcept = 0;
  // Memory a communicator owns from now on (a window, Communicator::allocateWindow): release()
  // leaves it alone, the communicator frees it when it closes.
  void adoptWindow(const void* pointer) {
    adopted_.insert(pointer);
    unused_windows_.erase(pointer);
  }
  // Adopted memory released since (nobody holds it): a window a later agreement may hand out
  // again (adoptWindow takes it back).
  const std::unordered_set<const void*>& unusedWindows() const { return unused_windows_; }
  // The communicator freed every window it made: their addresses are ordinary memory again.
  void forgetWindows() noexcept {
    adopted_.clear();
    unused_windows_.clear();
  }

  // Copies `bytes` bytes (asynchronously on CUDA: see Ordering). Host-side pointers may be any
  // host memory; registered memory is faster.
  virtual void copy(void* dst, const void* src, size_t bytes, CopyKind kind) = 0;
  // Blocks until every operation issued so far has completed, polling `waiter` so a dead peer
  // or the deadline ends the wait.
  virtual void synchronize(Waiter& waiter) = 0;

  // Element-wise kernels on device memory (see core/host_kernels.h for the host semantics).
  // acc = op(acc, x); Avg accumulates like Sum.
  virtual void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) = 0;
  // buffer *= factor (floating dtypes).
  virtual void scale(void* buffer, size_t count, DType dtype, double factor) = 0;
  virtual void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) = 0;
  // Row i of dst = row rows[i] of src (row_bytes each; dst and src in device memory, rows on the
  // host). The default issues one device-to-device copy per row; a backend may use a kernel.
  virtual void gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                          size_t count);

  // Host memory the device copies from or to repeatedly (Data segments, staging buffers): the
  // CUDA device pins it with cudaHostRegister, the host device does nothing. unregister takes the
  // pointer given to register.
  virtual void registerHostMemory(void* pointer, size_t bytes) = 0;
  virtual void unregisterHostMemory(void* pointer) noexcept = 0;
  // An array for a result the device copies to the host (device-to-host). Its contents are
  // undefined until that copy. The host device: a plain Array. A GPU: page-locked memory from a
  // pool, which the copy fills at full DMA speed (pageable memory goes through a bounce buffer
  // and a memcpy, at a sixth of it), and which the Array returns to the pool when dropped.
  virtual Array resultArray(DType dtype, Shape shape) { return Array(dtype, std::move(shape)); }

  // Step times (ForkOptions::step_times, core/phase_clock.h): marks on the device's stream around
  // a call's plugin work (the first start and the last end count), and the span between them in
  // nanoseconds once that work is done (polling `waiter`), which clears the marks; -1 without
  // both marks. The host device keeps none: its plugin's time is the host's.
  virtual void markWork(bool /*start*/) {}
  virtual int64_t workSpanNs(Waiter& /*waiter*/) { return -1; }

  virtual DeviceHandles handles() const = 0;
  // True after the backend aborted: queued work may never finish, so nothing may wait for it
  // (plugin instances are then not destroyed: their teardown could wait on the GPU).
  virtual bool aborted() const { return false; }

 protected:
  // For release(): true if `pointer` was adopted (adoptWindow), which release must leave alone;
  // it is then free to be handed out again (unusedWindows).
  bool releaseAdopted(const void* pointer) {
    if (adopted_.empty() || adopted_.count(pointer) == 0) return false;
    unused_windows_.insert(pointer);
    return true;
  }

 private:
  std::unordered_set<const void*> adopted_;
  std::unordered_set<const void*> unused_windows_;
};

}  // namespace synk
