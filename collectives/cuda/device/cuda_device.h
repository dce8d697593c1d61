#pragma once
// One GPU of one rank (core/device.h), created in the rank's process after fork.
//
// Binding: cudaSetDevice(ordinal), ordinal in CUDA's numbering inside this process (after
// CUDA_VISIBLE_DEVICES); the primary context is created here, never in the master before fork.
// Every operation is issued on one non-blocking stream of the highest priority (the Device's
// ordering contract; the constructor says why the priority); the cuBLAS handle is bound to it
// and, with the NCCL communicator, handed to plugins as handles().
// All methods are called from the rank's main thread.
//
// Memory: the stream-ordered allocator (cudaMallocAsync/cudaFreeAsync on the stream, default pool
// with an unlimited release threshold) is the caching allocator: allocate and release never
// synchronise the device, and freed blocks are reused in stream order. Memory allocated here is
// for use on this stream; a plugin using another stream must order it after this one.
//
// Waiting: synchronize() polls cudaStreamQuery (and the NCCL communicator's asynchronous error)
// and the Waiter; nothing here blocks inside CUDA, including copies to or from pageable memory
// (see pinned_bounce.h). After markAborted() no method may wait on the GPU again: destruction
// frees nothing that would (the process exits next).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "synk/collectives/cuda/device/pinned_bounce.h"
#include "synk/collectives/cuda/device/pinned_pool.h"
#include "synk/collectives/cuda/nccl/nccl_device.h"
#include "synk/core/device.h"

namespace synk {

class CudaDevice final : public Device, public NcclDevice {
 public:
  // `rank` only names this rank in messages and timeouts.
  CudaDevice(int ordinal, int rank);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  int ordinal() const override { return ordinal_; }
  std::string describe() const override { return description_; }

  void* allocate(size_t bytes) override;
  void release(void* pointer) noexcept override;
  void copy(void* dst, const void* src, size_t bytes, CopyKind kind) override;
  void synchronize(Waiter& waiter) override;

  void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) override;
  void scale(void* buffer, size_t count, DType dtype, double factor) override;
  void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) override;
  // One kernel instead of one copy per row; the row list goes up through a reused index buffer.
  void gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                  size_t count) override;

  // cudaHostRegister(cudaHostRegisterPortable); memory registered already (by anyone) is fine.
  void registerHostMemory(void* pointer, size_t bytes) override;
  // Unregisters what registerHostMemory registered; other pointers are ignored.
  void unregisterHostMemory(void* pointer) noexcept override;
  // Pinned memory from pool_ (kMinBytes and larger), else a plain Array.
  Array resultArray(DType dtype, Shape shape) override;

  DeviceHandles handles() const override { return {stream_, blas_, comm_}; }
  // CUDA events with timing, recorded on the stream.
  void markWork(bool start) override;
  int64_t workSpanNs(Waiter& waiter) override;

  // NcclDevice: the stream, binding, a non-waiting look at the stream, and the communicators
  // whose asynchronous errors synchronize() polls (not owned; `collectives` is also handed to
  // plugins by handles()).
  Device& device() override { return *this; }
  cudaStream_t stream() const override { return stream_; }
  void bindCallingThread() override;
  StreamState queryStream() noexcept override;
  void attachNccl(ncclComm_t collectives, ncclComm_t other, ncclComm_t windows) override {
    comm_ = collectives;
    other_comm_ = other != collectives ? other : nullptr;
    windows_comm_ = windows;
  }
  int rank() const { return rank_; }
  // Whether host memory [pointer, pointer + bytes) is page-locked (registered or pinned).
  bool isPinned(const void* pointer, size_t bytes) const;
  // After a failure: no later call waits on the GPU, destruction releases nothing.
  void markAborted() noexcept override;
  // False once the CUDA runtime is being torn down (process exit: cudart's atexit handler ran
  // before whatever is destroying this device); then nothing may call CUDA any more.
  bool runtimeAlive() const;
  bool aborted() const override { return aborted_; }

 private:
  bool streamIdle();
  // isPinned, throwing InvalidArgument if the "host" pointer is GPU memory.
  bool hostSidePinned(const void* pointer, size_t bytes, const char* what) const;
  void destroyHandles() noexcept;

  int ordinal_;
  int rank_;
  std::string description_;
  std::string wait_what_;  // "GPU work on cuda:0 (...)", built once: synchronize never allocates
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  ncclComm_t comm_ = nullptr;
  ncclComm_t other_comm_ = nullptr;
  ncclComm_t windows_comm_ = nullptr;
  bool pools_ = false;                      // stream-ordered allocator supported
  std::map<uintptr_t, size_t> registered_;  // host ranges this device registered
  PinnedBounce bounce_;
  std::shared_ptr<PinnedPool> pool_ = std::make_shared<PinnedPool>();
  void* row_index_ = nullptr;  // device copy of gatherRows' row list, grown on demand
  size_t row_index_bytes_ = 0;
  bool aborted_ = false;
  cudaEvent_t work_start_ = nullptr;  // step times: made on first use
  cudaEvent_t work_end_ = nullptr;
  bool work_started_ = false;
  bool work_ended_ = false;
  static constexpr uint32_t kNcclCheckEvery = 16;
  uint32_t busy_polls_ = 0;  // streamIdle's polls of a busy stream, for kNcclCheckEvery
};

}  // namespace synk
