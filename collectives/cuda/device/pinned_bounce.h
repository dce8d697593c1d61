#pragma once
// Pinned bounce buffers for copies between the GPU and pageable (unregistered) host memory.
//
// Why: cudaMemcpyAsync with pageable host memory is not asynchronous. Host-to-device first waits
// for the stream to drain; device-to-host returns only once the copy is done. Both are waits
// inside CUDA that no Waiter can interrupt: behind a collective whose peer died they would block
// forever (and the master, also a rank, would never notice the death). Copies through a pinned
// buffer are truly asynchronous, so every wait stays in CudaDevice::synchronize's poll loop:
//   host-to-device: memcpy into a pinned buffer now, then an async copy from it;
//   device-to-host: an async copy into a pinned buffer; complete() (after the stream drained)
//   copies it to its destination, which the Device contract lets the caller read only after
//   synchronize() anyway.
// Registered memory (Data segments, heap staging buffers) never comes here.
#include <cstddef>
#include <vector>

namespace synk {

class PinnedBounce {
 public:
  PinnedBounce() = default;
  ~PinnedBounce();
  PinnedBounce(const PinnedBounce&) = delete;
  PinnedBounce& operator=(const PinnedBounce&) = delete;

  // A pinned buffer holding a copy of src[0, bytes); busy until complete().
  void* stageIn(const void* src, size_t bytes);
  // A pinned buffer the device writes `bytes` into; complete() copies it to dst.
  void* stageOut(void* dst, size_t bytes);
  // Call when every copy issued so far has completed: finishes device-to-host copies and makes
  // the buffers reusable (keeping at most kKeepBytes cached).
  void complete();
  // A wait failed: the device-to-host copies will never be delivered (their destinations may be
  // gone by the next complete()). The buffers stay busy until a later complete().
  void dropPending() { pending_.clear(); }
  // After an abort: never call CUDA again (cudaFreeHost could wait on a hung GPU).
  void abandon() { abandoned_ = true; }

  // Cached between calls. A pageable copy larger than this allocates its pinned buffer per call
  // and frees it at the next synchronize; cudaFreeHost waits for the whole device, so this is
  // kept large enough for the variables a call reads back (pinned memory is plentiful here).
  static constexpr size_t kKeepBytes = size_t{1} << 30;
  // Copies up to this size share 1 MiB slabs (bump allocation), so many small copies between two
  // synchronize() calls (row lists, scalars) do not take a buffer each.
  static constexpr size_t kSmallBytes = size_t{64} << 10;

 private:
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
  };
  struct Pending {
    void* dst;
    const void* src;
    size_t bytes;
  };
  void* take(size_t bytes);
  void recycle();

  std::vector<Buffer> free_;
  std::vector<Buffer> busy_;
  std::vector<Pending> pending_;
  Buffer slab_;  // the busy buffer small copies are carved from
  size_t slab_used_ = 0;
  bool abandoned_ = false;
};

}  // namespace synk
