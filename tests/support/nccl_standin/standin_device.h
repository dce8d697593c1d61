#pragma once
// A stand-in GPU for one rank: Device + NcclDevice in host memory, with a worker thread as its
// one stream (standin_stream.h). Everything CudaDevice issues on its stream is queued here in the
// same order, NCCL operations included, so the ordering contract of core/device.h holds and work
// still runs after the call that issued it returned. synchronize() waits like CudaDevice's
// (collectives/cuda/nccl/gpu_wait.h's pollUntil): it polls the stream and the attached
// communicators' asynchronous errors and calls the Waiter between polls.
//
// Host memory is staged as CudaDevice stages pageable memory
// (collectives/cuda/device/pinned_bounce.h): a host-to-device copy takes the source when it is
// issued, a device-to-host copy lands in a staging buffer that synchronize() delivers once the
// stream drained, and drops when the wait failed. So the stream never writes host memory that an
// unwinding caller already freed.
#include <memory>
#include <string>
#include <vector>

#include "synk/collectives/cuda/nccl/nccl_api.h"
#include "synk/collectives/cuda/nccl/nccl_device.h"
#include "synk/core/device.h"
#include "tests/support/nccl_standin/standin_stream.h"

namespace synk::standin {

class StandinDevice final : public Device, public NcclDevice {
 public:
  // `nccl` answers synchronize()'s ncclCommGetAsyncError (the stand-in's table).
  StandinDevice(int ordinal, int rank, const NcclApi& nccl);
  ~StandinDevice() override;
  StandinDevice(const StandinDevice&) = delete;
  StandinDevice& operator=(const StandinDevice&) = delete;

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  int ordinal() const override { return ordinal_; }
  std::string describe() const override { return description_; }

  // Host memory, 256-byte aligned; release is stream-ordered (like cudaFreeAsync).
  void* allocate(size_t bytes) override;
  void release(void* pointer) noexcept override;
  void copy(void* dst, const void* src, size_t bytes, CopyKind kind) override;
  void synchronize(Waiter& waiter) override;
  void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) override;
  void scale(void* buffer, size_t count, DType dtype, double factor) override;
  void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) override;
  void gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                  size_t count) override;
  void registerHostMemory(void*, size_t) override {}
  void unregisterHostMemory(void*) noexcept override {}
  DeviceHandles handles() const override;
  bool aborted() const override { return aborted_; }

  Device& device() override { return *this; }
  cudaStream_t stream() const override { return stream_->handle(); }
  void bindCallingThread() override {}  // one device per process: nothing to bind
  StreamState queryStream() noexcept override;
  void attachNccl(ncclComm_t collectives, ncclComm_t other, ncclComm_t windows) override {
    comm_ = collectives;
    other_comm_ = other != collectives ? other : nullptr;
    windows_comm_ = windows;
  }
  void markAborted() noexcept override { aborted_ = true; }

 private:
  // A device-to-host copy waiting for synchronize() to deliver it.
  struct Staged {
    void* dst;
    std::vector<std::byte> data;
  };

  bool streamIdle();
  void enqueue(Stream::Work work);

  int ordinal_;
  int rank_;
  const NcclApi& nccl_;
  std::string description_;
  std::string wait_what_;
  std::shared_ptr<Stream> stream_;
  ncclComm_t comm_ = nullptr;
  ncclComm_t other_comm_ = nullptr;
  ncclComm_t windows_comm_ = nullptr;
  std::vector<std::shared_ptr<Staged>> staged_;  // touched by the caller's thread only
  bool aborted_ = false;
};

}  // namespace synk::standin
