#include "tests/support/nccl_standin/standin_device.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "synk/collectives/cuda/nccl/gpu_wait.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "tests/support/nccl_standin/standin_faults.h"

namespace synk::standin {
namespace {

constexpr size_t kAlignment = 256;
// How long the destructor lets queued work finish before it stops the stream: synk drains the
// stream before it closes NCCL, so work still queued then is reported.
constexpr auto kDrainAtDestruction = std::chrono::seconds(10);

}  // namespace

StandinDevice::StandinDevice(int ordinal, int rank, const NcclApi& nccl)
    : ordinal_(ordinal),
      rank_(rank),
      nccl_(nccl),
      description_(str("nccl-standin:", ordinal, " (host memory)")),
      wait_what_(str("stand-in GPU work on ", description_)),
      stream_(Stream::create(description_)) {}

StandinDevice::~StandinDevice() {
  // After an abort nothing may wait (queued work may never finish): stop at once, leaking what
  // the stream would have freed, as CudaDevice does.
  if (!aborted_ && !stream_->waitIdleFor(kDrainAtDestruction)) {
    recordViolation(str("rank ", rank_, ": the device was destroyed with work still queued on its ",
                        "stream (a collective whose peer never came?) and no abort"));
  }
  stream_->stop();
}

void StandinDevice::enqueue(Stream::Work work) {
  SYNK_CHECK(!aborted_, "stand-in device used after abort");
  if (!stream_->enqueue(std::move(work))) throw CudaError("the stand-in stream is stopped");
}

void* StandinDevice::allocate(size_t bytes) {
  const size_t size = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* pointer = std::aligned_alloc(kAlignment, size);
  if (pointer == nullptr) {
    throw CudaError(
        str("rank ", rank_, ": out of stand-in GPU memory: cannot allocate ", bytes, " bytes"));
  }
  return pointer;
}

void StandinDevice::release(void* pointer) noexcept {
  if (pointer == nullptr || aborted_ || releaseAdopted(pointer)) return;
  // Stream-ordered: work queued before may still read it. A stopped stream may still be
  // finishing an item that reads it: leaked then.
  (void)stream_->enqueue([pointer](const Stream&) { std::free(pointer); });
}

void StandinDevice::copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    throw InvalidArgument(str("rank ", rank_, ": copy of ", bytes, " bytes with a null pointer"));
  }
  switch (kind) {
    case CopyKind::HostToDevice: {
      const auto* from = static_cast<const std::byte*>(src);
      auto data = std::make_shared<std::vector<std::byte>>(from, from + bytes);
      enqueue([dst, data](const Stream&) { std::memcpy(dst, data->data(), data->size()); });
      return;
    }
    case CopyKind::DeviceToHost: {
      auto staged = std::make_shared<Staged>(Staged{dst, std::vector<std::byte>(bytes)});
      staged_.push_back(staged);
      enqueue([staged, src](const Stream&) {
        std::memcpy(staged->data.data(), src, staged->data.size());
      });
      return;
    }
    case CopyKind::DeviceToDevice:
      enqueue([dst, src, bytes](const Stream&) { std::memmove(dst, src, bytes); });
      return;
  }
  throw InvalidArgument(str("unknown copy kind ", static_cast<int>(kind)));
}

void StandinDevice::accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op) {
  enqueue([=](const Stream&) { host::accumulate(acc, x, count, dtype, op); });
}

void StandinDevice::scale(void* buffer, size_t count, DType dtype, double factor) {
  if (!isFloating(dtype)) {
    throw InvalidArgument(str("scale: dtype ", dtypeName(dtype), " is not floating-point"));
  }
  enqueue([=](const Stream&) { host::scaleCopy(buffer, buffer, count, dtype, factor); });
}

void StandinDevice::fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op) {
  enqueue([=](const Stream&) { host::fillIdentity(buffer, count, dtype, op); });
}

void StandinDevice::gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                               size_t count) {
  if (count == 0 || row_bytes == 0) return;
  // The row list is host memory the caller may reuse at once: taken now (CudaDevice uploads it).
  auto list = std::make_shared<std::vector<int64_t>>(rows, rows + count);
  enqueue([=](const Stream&) {
    for (size_t i = 0; i < list->size(); ++i) {
      std::memcpy(static_cast<char*>(dst) + i * row_bytes,
                  static_cast<const char*>(src) + (*list)[i] * row_bytes, row_bytes);
    }
  });
}

DeviceHandles StandinDevice::handles() const {
  return {stream_->handle(), nullptr, comm_};
}

NcclDevice::StreamState StandinDevice::queryStream() noexcept {
  if (stream_->failed()) return StreamState::Failed;
  return stream_->idle() ? StreamState::Idle : StreamState::Busy;
}

bool StandinDevice::streamIdle() {
  if (stream_->failed()) {
    throw CudaError(str("rank ", rank_, " (", description_,
                        "): stand-in stream work failed: ", stream_->failure()));
  }
  // A short wait on the stream instead of a bare look: the poll loop then costs no core.
  if (stream_->waitIdleFor(std::chrono::microseconds(200))) return true;
  for (ncclComm_t comm : {comm_, other_comm_, windows_comm_}) {
    if (comm == nullptr) continue;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = nccl_.commGetAsyncError(comm, &state);
    if (queried != ncclSuccess) state = queried;
    if (state != ncclSuccess && state != ncclInProgress) {
      throw NcclError(str("rank ", rank_, " (", description_,
                          "): NCCL reported an error while the GPU was working: ",
                          describeNccl(nccl_, state, comm)));
    }
  }
  return false;
}

void StandinDevice::synchronize(Waiter& waiter) {
  SYNK_CHECK(!aborted_, "synchronize after abort");
  try {
    pollUntil(waiter, rank_, wait_what_.c_str(), [this] { return streamIdle(); });
  } catch (...) {
    staged_.clear();  // the destinations may be gone by the next synchronize
    throw;
  }
  for (const auto& staged : staged_)
    std::memcpy(staged->dst, staged->data.data(), staged->data.size());
  staged_.clear();
}

}  // namespace synk::standin
