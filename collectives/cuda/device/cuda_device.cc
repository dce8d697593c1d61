#include "synk/collectives/cuda/device/cuda_device.h"

#include <cstdlib>

#include "synk/collectives/cuda/device/cuda_check.h"
#include "synk/collectives/cuda/device/device_kernels.h"
#include "synk/collectives/cuda/nccl/gpu_wait.h"
#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/phase_clock.h"

namespace synk {
namespace {

constexpr size_t kAlignment = 256;

// What CUDA knows about an address: unregistered (pageable) host memory, pinned host memory,
// device memory or managed memory.
cudaMemoryType memoryTypeOf(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaMemoryTypeUnregistered;
  }
  return attributes.type;
}

bool pinnedByCuda(const void* pointer) {
  const cudaMemoryType type = memoryTypeOf(pointer);
  // Managed memory is not pageable either: the driver copies it without a host-side wait.
  return type == cudaMemoryTypeHost || type == cudaMemoryTypeManaged;
}

std::string visibleDevicesNote() {
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  return cvd ? str(" (CUDA_VISIBLE_DEVICES='", cvd, "')") : std::string();
}

}  // namespace

CudaDevice::CudaDevice(int ordinal, int rank) : ordinal_(ordinal), rank_(rank) {
  try {
    int count = 0;
    SYNK_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (ordinal < 0 || ordinal >= count) {
      throw InvalidArgument(str("rank ", rank, ": GPU ", ordinal, " does not exist: CUDA sees ",
                                count, " device(s) in this process", visibleDevicesNote()));
    }
    SYNK_CUDA_CHECK(cudaSetDevice(ordinal));  // creates this process's primary context
    cudaDeviceProp properties{};
    SYNK_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
    char bus_id[32] = {};
    SYNK_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), ordinal));
    description_ = str("cuda:", ordinal, " (", properties.name, ", ", bus_id, ")");
    wait_what_ = str("GPU work on ", description_);
    int pools = 0;
    SYNK_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal));
    pools_ = pools != 0;
    if (pools_) {
      cudaMemPool_t pool = nullptr;
      SYNK_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, ordinal));
      // Keep freed memory in the pool (the caching allocator) instead of returning it to the
      // driver at every synchronisation.
      uint64_t threshold = UINT64_MAX;
      SYNK_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    }
    // The highest priority (meant to get NCCL's blocks SMs first beside a plugin's own stream);
    // measured, not a lever: in the mlp's CUDA graph every node shares it; NCCL's kept above the
    // GEMMs cost 0.5 ms, the GEMMs above NCCL's nothing (results/device/2026-11-27-*priorit*).
    int least = 0, greatest = 0;
    SYNK_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SYNK_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    SYNK_CUBLAS_CHECK(cublasCreate(&blas_));
    SYNK_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  } catch (const CudaError& e) {
    destroyHandles();
    throw CudaError(
        str("rank ", rank, ": cannot use GPU ", ordinal, visibleDevicesNote(), ": ", e.what()));
  }
}

CudaDevice::~CudaDevice() {
  if (aborted_) return;  // the process exits next; nothing here may wait on a hung GPU
  release(row_index_);
  for (const auto& [base, bytes] : registered_) {
    const cudaError_t err = cudaHostUnregister(reinterpret_cast<void*>(base));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      logWarning("cudaHostUnregister failed: ", cudaGetErrorString(err));
    }
  }
  destroyHandles();
}

void CudaDevice::destroyHandles() noexcept {
  for (cudaEvent_t event : {work_start_, work_end_})
    if (event != nullptr) cudaEventDestroy(event);
  work_start_ = work_end_ = nullptr;
  if (blas_ != nullptr) cublasDestroy(blas_);
  blas_ = nullptr;
  // Returns at once even with work queued; the stream is released when that work is done.
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaDevice::markAborted() noexcept {
  aborted_ = true;
  bounce_.abandon();
  pool_->abandon();
}

void CudaDevice::bindCallingThread() {
  SYNK_CUDA_CHECK(cudaSetDevice(ordinal_));
}

NcclDevice::StreamState CudaDevice::queryStream() noexcept {
  const cudaError_t state = cudaStreamQuery(stream_);
  if (state == cudaSuccess) return StreamState::Idle;
  if (state == cudaErrorNotReady) return StreamState::Busy;
  (void)cudaGetLastError();
  return StreamState::Failed;
}

bool CudaDevice::runtimeAlive() const {
  const cudaError_t state = cudaStreamQuery(stream_);
  if (state == cudaSuccess || state == cudaErrorNotReady) return true;
  (void)cudaGetLastError();
  return state != cudaErrorCudartUnloading;
}

void* CudaDevice::allocate(size_t bytes) {
  const size_t size = bytes < kAlignment ? kAlignment : bytes;  // allocate(0) is a unique pointer
  void* pointer = nullptr;
  cudaError_t err = pools_ ? cudaMallocAsync(&pointer, size, stream_) : cudaMalloc(&pointer, size);
  if (err == cudaErrorMemoryAllocation && pools_) {
    // Hand the pool's unused cached memory back to the driver and try once more.
    (void)cudaGetLastError();
    cudaMemPool_t pool = nullptr;
    SYNK_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, ordinal_));
    SYNK_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    err = cudaMallocAsync(&pointer, size, stream_);
  }
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw CudaError(str("rank ", rank_, ": out of GPU memory on ", description_,
                        ": cannot allocate ", bytes, " bytes (", free_bytes, " of ", total_bytes,
                        " bytes free)"));
  }
  if (err != cudaSuccess) {
    cuda_detail::throwCudaFailure(
        __FILE__, __LINE__,
        pools_ ? "cudaMallocAsync(&pointer, size, stream)" : "cudaMalloc(&pointer, size)", err);
  }
  SYNK_CHECK(reinterpret_cast<uintptr_t>(pointer) % kAlignment == 0, "GPU allocation ", pointer,
             " is not ", kAlignment, "-byte aligned");
  return pointer;
}

void CudaDevice::release(void* pointer) noexcept {
  if (pointer == nullptr || aborted_ || releaseAdopted(pointer)) return;
  // Stream-ordered: the block is reused only after the work queued so far has read it.
  const cudaError_t err = pools_ ? cudaFreeAsync(pointer, stream_) : cudaFree(pointer);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    logWarning("freeing GPU memory ", pointer, " failed: ", cudaGetErrorString(err));
  }
}

bool CudaDevice::isPinned(const void* pointer, size_t bytes) const {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  auto it = registered_.upper_bound(address);
  if (it != registered_.begin()) {
    --it;
    if (address >= it->first && address + bytes <= it->first + it->second) return true;
  }
  return pinnedByCuda(pointer) &&
         (bytes <= 1 || pinnedByCuda(static_cast<const char*>(pointer) + bytes - 1));
}

bool CudaDevice::hostSidePinned(const void* pointer, size_t bytes, const char* what) const {
  if (isPinned(pointer, bytes)) return true;
  // Not pinned: the bounce memcpy will read or write it on the host, so a GPU pointer here
  // (a swapped copy kind) must fail clearly instead of crashing.
  if (memoryTypeOf(pointer) == cudaMemoryTypeDevice) {
    throw InvalidArgument(str("rank ", rank_, ": the ", what, " copy is GPU memory (", pointer,
                              "), not host memory"));
  }
  return false;
}

void CudaDevice::copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    throw InvalidArgument(str("rank ", rank_, ": copy of ", bytes, " bytes with a null pointer"));
  }
  switch (kind) {
    case CopyKind::DeviceToDevice:
      SYNK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
      return;
    case CopyKind::HostToDevice: {
      const bool pinned = hostSidePinned(src, bytes, "source of a host-to-device");
      const void* from = pinned ? src : bounce_.stageIn(src, bytes);
      SYNK_CUDA_CHECK(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyHostToDevice, stream_));
      return;
    }
    case CopyKind::DeviceToHost: {
      const bool pinned = hostSidePinned(dst, bytes, "destination of a device-to-host");
      void* to = pinned ? dst : bounce_.stageOut(dst, bytes);
      SYNK_CUDA_CHECK(cudaMemcpyAsync(to, src, bytes, cudaMemcpyDeviceToHost, stream_));
      return;
    }
  }
  throw InvalidArgument(str("unknown copy kind ", static_cast<int>(kind)));
}

bool CudaDevice::streamIdle() {
  const cudaError_t state = cudaStreamQuery(stream_);
  if (state == cudaSuccess) return true;
  if (state != cudaErrorNotReady) {
    cuda_detail::throwCudaFailure(__FILE__, __LINE__, "cudaStreamQuery(stream)", state);
  }
  // NCCL's asynchronous errors every kNcclCheckEvery polls while busy: a failed collective is
  // rare and never urgent to the microsecond, and asking costs as much as the stream query.
  if (++busy_polls_ % kNcclCheckEvery != 1) return false;
  for (ncclComm_t comm : {comm_, other_comm_, windows_comm_}) {
    if (comm == nullptr) continue;
    ncclResult_t async_state = ncclSuccess;
    SYNK_NCCL_CHECK(ncclCommGetAsyncError(comm, &async_state));
    if (async_state != ncclSuccess && async_state != ncclInProgress) {
      throw NcclError(str("rank ", rank_, " (", description_,
                          "): NCCL reported an error while the GPU was working: ",
                          cuda_detail::describeNccl(async_state, comm)));
    }
  }
  return false;
}

void CudaDevice::synchronize(Waiter& waiter) {
  SYNK_CHECK(!aborted_, "synchronize after abort");
  PhaseScope phase(Phase::DeviceWait);
  try {
    pollUntil(waiter, rank_, wait_what_.c_str(), [this] { return streamIdle(); });
  } catch (...) {
    bounce_.dropPending();
    throw;
  }
  bounce_.complete();
}

void CudaDevice::markWork(bool start) {
  if (start && work_started_) return;  // the first start of a call counts
  cudaEvent_t& event = start ? work_start_ : work_end_;
  if (event == nullptr) SYNK_CUDA_CHECK(cudaEventCreate(&event));
  SYNK_CUDA_CHECK(cudaEventRecord(event, stream_));
  (start ? work_started_ : work_ended_) = true;
}

int64_t CudaDevice::workSpanNs(Waiter& waiter) {
  // Cleared on every path: a plugin that threw between the marks leaves a start without an end,
  // which the next call's start must replace, not extend back to the failed call.
  const bool both = work_started_ && work_ended_;
  work_started_ = work_ended_ = false;
  if (!both) return -1;
  pollUntil(waiter, rank_, wait_what_.c_str(), [this] {
    const cudaError_t state = cudaEventQuery(work_end_);
    if (state == cudaErrorNotReady) return false;
    SYNK_CUDA_CHECK(state);
    return true;
  });
  float ms = 0;
  SYNK_CUDA_CHECK(cudaEventElapsedTime(&ms, work_start_, work_end_));
  return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
}

void CudaDevice::accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) {
  kernels::accumulate(acc, x, count, dtype, op, stream_);
}

void CudaDevice::scale(void* buffer, size_t count, DType dtype, double factor) {
  if (!isFloating(dtype)) {  // an integer factor of 1/n would be 0
    throw InvalidArgument(str("scale: dtype ", dtypeName(dtype), " is not floating-point"));
  }
  kernels::scale(buffer, count, dtype, factor, stream_);
}

void CudaDevice::fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) {
  kernels::fillIdentity(buffer, count, dtype, op, stream_);
}

void CudaDevice::gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                            size_t count) {
  if (count == 0 || row_bytes == 0) return;
  const size_t index_bytes = count * sizeof(int64_t);
  if (index_bytes > row_index_bytes_) {
    release(row_index_);  // stream-ordered: the last kernel has read it before it is reused
    row_index_ = nullptr;
    row_index_bytes_ = 0;
    row_index_ = allocate(index_bytes);
    row_index_bytes_ = index_bytes;
  }
  copy(row_index_, rows, index_bytes, CopyKind::HostToDevice);
  kernels::gatherRows(dst, src, row_bytes, static_cast<const int64_t*>(row_index_), count, stream_);
}

void CudaDevice::registerHostMemory(void* pointer, size_t bytes) {
  if (pointer == nullptr || bytes == 0) return;
  const cudaError_t err = cudaHostRegister(pointer, bytes, cudaHostRegisterPortable);
  if (err == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();  // pinned already (by us or by someone else): fine
    return;
  }
  if (err != cudaSuccess) {
    cuda_detail::throwCudaFailure(
        __FILE__, __LINE__,
        str("cudaHostRegister(", pointer, ", ", bytes, " bytes, cudaHostRegisterPortable)").c_str(),
        err);
  }
  registered_[reinterpret_cast<uintptr_t>(pointer)] = bytes;
}

Array CudaDevice::resultArray(DType dtype, Shape shape) {
  const size_t bytes = byteCount(numElements(shape), dtype);
  if (bytes < PinnedPool::kMinBytes) return Array(dtype, std::move(shape));
  return Array(dtype, std::move(shape), pool_->take(bytes));
}

void CudaDevice::unregisterHostMemory(void* pointer) noexcept {
  const auto it = registered_.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == registered_.end()) return;
  registered_.erase(it);
  if (aborted_) return;
  const cudaError_t err = cudaHostUnregister(pointer);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    logWarning("cudaHostUnregister(", pointer, ") failed: ", cudaGetErrorString(err));
  }
}

}  // namespace synk
