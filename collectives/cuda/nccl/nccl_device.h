#pragma once
// What NcclCommunicator needs of its rank's GPU beyond the Device interface: CudaDevice in
// production, the stand-in device of tests/support/nccl_standin/ in CI (host memory, a worker
// thread as the stream). Kept this small so the NCCL state machine can be driven without CUDA.
#include <cuda_runtime_api.h>
#include <nccl.h>

namespace synk {

class Device;

class NcclDevice {
 public:
  enum class StreamState { Idle, Busy, Failed };

  virtual ~NcclDevice() = default;
  // The Device NCCL's buffers live on: scale() and copy() order work after NCCL's on the stream.
  virtual Device& device() = 0;
  // The stream every NCCL operation is enqueued on.
  virtual cudaStream_t stream() const = 0;
  // Makes this device current on the calling thread (NCCL binds a communicator to it).
  virtual void bindCallingThread() = 0;
  // A look at the stream that never waits (close drains it under its own bound).
  virtual StreamState queryStream() noexcept = 0;
  // The communicators whose asynchronous errors synchronize() polls: `collectives` runs every
  // collective (and is handed to plugins); `other` runs gather's send/recv and may be the same;
  // `windows` runs the all-reduces of calls with windows (null until the first window).
  // nullptr detaches.
  virtual void attachNccl(ncclComm_t collectives, ncclComm_t other, ncclComm_t windows) = 0;
  // After an abort: no later call may wait on the stream, destruction releases nothing.
  virtual void markAborted() noexcept = 0;
};

}  // namespace synk
