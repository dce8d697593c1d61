#include "synk/collectives/cuda/staging/staged_pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "synk/collectives/cuda/device/cuda_check.h"
#include "synk/collectives/cuda/device/cuda_device.h"
#include "synk/collectives/cuda/device/device_kernels.h"
#include "synk/collectives/cuda/nccl/gpu_wait.h"
#include "synk/collectives/shm/owned_range.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {
namespace {

using shm_detail::kLineBytes;
using shm_detail::ownedRange;

}  // namespace

size_t StagedAllReduce::chunkBytes(size_t bytes, size_t chunks) {
  constexpr size_t kMin = size_t{1} << 20, kMax = size_t{64} << 20;
  const auto rule = [bytes] {
    return static_cast<size_t>(std::sqrt(static_cast<double>(bytes) * double(kChunkScale)));
  };
  const size_t chunk = std::clamp(chunks > 0 ? bytes / chunks : rule(), kMin, kMax);
  return (chunk + kLineBytes - 1) / kLineBytes * kLineBytes;
}

size_t StagedAllReduce::chunkOverride() {
  static const size_t chunks = [] {
    const char* text = std::getenv("SYNK_STAGED_CHUNKS");
    if (text == nullptr || *text == '\0') return size_t{0};
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > 256) {
      throw InvalidArgument(
          str("SYNK_STAGED_CHUNKS must be a whole number from 1 to 256, got '", text, "'"));
    }
    return static_cast<size_t>(value);
  }();
  return chunks;
}

StagedAllReduce::StagedAllReduce(ProcessGroup& group, ShmHeap& heap, CudaDevice& device)
    : group_(group), heap_(heap), device_(device), rank_(group.rank()), n_(group.size()) {
  chunkOverride();  // a bad SYNK_STAGED_CHUNKS fails the backend's start, not a later call
}

StagedAllReduce::~StagedAllReduce() {
  // After an abort nothing may wait on the GPU (a copy may still be in flight): leak.
  if (device_.aborted() || !device_.runtimeAlive()) {
    acc_.abandon();
    part_.abandon();
    return;
  }
  for (cudaStream_t s : {in_, results_, out_})
    if (s) cudaStreamSynchronize(s);
  acc_ = DeviceBuffer();
  part_ = DeviceBuffer();
  for (cudaEvent_t e : events_)
    cudaEventDestroy(e);
  for (cudaStream_t s : {in_, results_, out_})
    if (s) cudaStreamDestroy(s);
}

cudaEvent_t StagedAllReduce::event(size_t index) {
  while (events_.size() <= index) {
    cudaEvent_t e = nullptr;
    SYNK_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    events_.push_back(e);
  }
  return events_[index];
}

void StagedAllReduce::ensureScratch(size_t bytes) {
  // A grow frees stream-ordered on the device's stream; the in_ stream's last use was waited
  // for by it.
  acc_.reserve(device_, bytes);
  part_.reserve(device_, bytes);
}

std::byte* StagedAllReduce::peerStaging(const ShmLocation& location) {
  auto* at = static_cast<std::byte*>(heap_.resolve(location));
  const std::byte* base = at - location.offset;
  if (registered_.insert(base).second) {
    device_.registerHostMemory(const_cast<std::byte*>(base), location.segment_bytes);
  }
  return at;
}

void StagedAllReduce::waitFor(cudaEvent_t event, Waiter& waiter, const char* what) {
  pollUntil(waiter, rank_, what, [&] {
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return true;
    if (state != cudaErrorNotReady) {
      cuda_detail::throwCudaFailure(__FILE__, __LINE__, "cudaEventQuery(staged all_reduce)", state);
    }
    return false;
  });
}

void StagedAllReduce::run(const AllReduceArgs& args, void* staging, bool staging_ok,
                          Waiter& waiter) {
  Barrier& barrier = group_.barrier();
  const size_t element = dtypeSize(args.dtype);
  const size_t bytes = args.count * element;
  const size_t chunk =
      chunkBytes(bytes, chunkOverride()) / element;  // elements per chunk, a multiple of a line
  const size_t chunks = (args.count + chunk - 1) / chunk;
  auto* buffer = static_cast<std::byte*>(args.buffer);
  // Out of place: this rank's values come from `send`, the result goes to `buffer`.
  const auto* source =
      static_cast<const std::byte*>(args.send != nullptr ? args.send : args.buffer);
  auto* mine = static_cast<std::byte*>(staging);

  // Publish this rank's staging; every rank fails together if one could not stage.
  bool ok = staging_ok;
  if (ok) {
    const std::optional<ShmLocation> where = heap_.locate(staging);
    ok = where.has_value();
    if (ok) std::memcpy(barrier.outbox(sizeof(ShmLocation)), &*where, sizeof(ShmLocation));
  }
  if (!barrier.arrive(waiter, BarrierSite::CollectiveIn, ok)) {
    for (int r = 0; r < n_; ++r) {
      if (!barrier.okOf(r)) {
        throw RankError(r, str("host-staged all_reduce: rank ", r, " could not stage its buffer"));
      }
    }
  }
  std::vector<std::byte*> staged(static_cast<size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    ShmLocation location;
    std::memcpy(&location, barrier.exchangeOf(r), sizeof location);
    staged[static_cast<size_t>(r)] = r == rank_ ? mine : peerStaging(location);
  }
  if (out_ == nullptr) {
    SYNK_CUDA_CHECK(cudaStreamCreateWithFlags(&out_, cudaStreamNonBlocking));
    SYNK_CUDA_CHECK(cudaStreamCreateWithFlags(&results_, cudaStreamNonBlocking));
    SYNK_CUDA_CHECK(cudaStreamCreateWithFlags(&in_, cudaStreamNonBlocking));
  }
  ensureScratch(std::max<size_t>((chunk / static_cast<size_t>(n_) + kLineBytes) * element, 256));
  // Every stream starts after everything queued on the device's stream (the buffer's producer,
  // the last call's copies in); three events per chunk, all made before the loop.
  const cudaStream_t main = device_.stream();
  const cudaEvent_t start = event(0);
  const cudaEvent_t done = event(3 * chunks + 1);
  SYNK_CUDA_CHECK(cudaEventRecord(start, main));
  for (cudaStream_t s : {out_, results_, in_})
    SYNK_CUDA_CHECK(cudaStreamWaitEvent(s, start, 0));
  auto staged_ev = [&](size_t c) { return event(1 + 3 * c); };
  auto reduced_ev = [&](size_t c) { return event(2 + 3 * c); };
  auto results_ev = [&](size_t c) { return event(3 + 3 * c); };
  auto chunkOf = [&](size_t c) {
    const size_t begin = c * chunk;
    return std::pair{begin, std::min(chunk, args.count - begin)};
  };

  // `copy(at, bytes)` for each part of chunk c that another rank reduces (byte offsets).
  auto forPeerParts = [&](size_t c, auto&& copy) {
    const auto [begin, len] = chunkOf(c);
    for (int p = 0; p < n_; ++p) {
      if (p == rank_) continue;
      const auto [b, e] = ownedRange(len, element, p, n_);
      if (b < e) copy((begin + b) * element, (e - b) * element);
    }
  };

  // 1. Every chunk's copies out, queued at once: the device-to-host engine never waits for the
  // host's barriers.
  for (size_t c = 0; c < chunks; ++c) {
    forPeerParts(c, [&](size_t at, size_t bytes) {
      SYNK_CUDA_CHECK(cudaMemcpyAsync(mine + at, source + at, bytes, cudaMemcpyDeviceToHost, out_));
    });
    SYNK_CUDA_CHECK(cudaEventRecord(staged_ev(c), out_));
  }
  // 3. This rank's part of chunk c, reduced in rank order (the shared-memory reduction's
  // arithmetic, by the device kernels that reproduce it), back into the buffer and out to every
  // peer's staging.
  auto reduce = [&](size_t c) {
    const auto [begin, len] = chunkOf(c);
    const auto [b, e] = ownedRange(len, element, rank_, n_);
    const size_t at = (begin + b) * element, part = (e - b) * element;
    if (part > 0) {
      for (int q = 0; q < n_; ++q) {
        void* into = q == 0 ? acc_.data() : part_.data();
        if (q == rank_) {
          SYNK_CUDA_CHECK(cudaMemcpyAsync(into, source + at, part, cudaMemcpyDeviceToDevice, in_));
        } else {
          SYNK_CUDA_CHECK(cudaMemcpyAsync(into, staged[static_cast<size_t>(q)] + at, part,
                                          cudaMemcpyHostToDevice, in_));
        }
        if (q > 0) kernels::accumulate(acc_.data(), part_.data(), e - b, args.dtype, args.op, in_);
      }
      if (args.op == ReduceOp::Avg) kernels::scale(acc_.data(), e - b, args.dtype, 1.0 / n_, in_);
      SYNK_CUDA_CHECK(
          cudaMemcpyAsync(buffer + at, acc_.data(), part, cudaMemcpyDeviceToDevice, in_));
    }
    SYNK_CUDA_CHECK(cudaEventRecord(reduced_ev(c), in_));
    // From the buffer, not acc_ (the next chunk reuses it), on a stream of its own so the
    // results do not queue behind the remaining copies out.
    SYNK_CUDA_CHECK(cudaStreamWaitEvent(results_, reduced_ev(c), 0));
    for (int p = 0; p < n_ && part > 0; ++p) {
      if (p == rank_) continue;
      SYNK_CUDA_CHECK(cudaMemcpyAsync(staged[static_cast<size_t>(p)] + at, buffer + at, part,
                                      cudaMemcpyDeviceToHost, results_));
    }
    SYNK_CUDA_CHECK(cudaEventRecord(results_ev(c), results_));
  };
  // 5. The other parts' results of chunk c, from this rank's staging.
  auto copyIn = [&](size_t c) {
    forPeerParts(c, [&](size_t at, size_t bytes) {
      SYNK_CUDA_CHECK(cudaMemcpyAsync(buffer + at, mine + at, bytes, cudaMemcpyHostToDevice, in_));
    });
  };
  // The host keeps one chunk ahead: chunk c's reduction is queued before chunk c-1's results
  // are waited for, so the device always has the next chunk's work.
  for (size_t c = 0; c <= chunks; ++c) {
    if (c < chunks) {
      waitFor(staged_ev(c), waiter, "the host-staged all_reduce's copies out");
      barrier.arrive(waiter, BarrierSite::CollectiveIn);  // 2. every rank's chunk c is staged
      reduce(c);
    }
    if (c > 0) {
      waitFor(results_ev(c - 1), waiter, "the host-staged all_reduce's results");
      barrier.arrive(waiter, BarrierSite::CollectiveOut);  // 4. chunk c-1's results are staged
      copyIn(c - 1);
    }
  }
  // Later work on the device's stream (and the next call's copies out) comes after these.
  SYNK_CUDA_CHECK(cudaEventRecord(done, in_));
  SYNK_CUDA_CHECK(cudaStreamWaitEvent(main, done, 0));
}

}  // namespace synk
