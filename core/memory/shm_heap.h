#pragma once
// One rank's heap of shared memory: device memory of the host device, and host staging memory
// of the CUDA backend. Any rank can reach any other rank's allocation: the owner publishes a
// ShmLocation (for instance in a barrier exchange) and the reader maps that segment once.
//
// Segments are named "<session prefix>h<rank>-<index>", created by their owner only, and are
// never unmapped or reused for another size while the session lives, so a peer's cached mapping
// stays valid. Small allocations share segments (first fit, coalescing free list); large ones get
// a segment of their own. The master's shutdown removes every name with the session prefix.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synk/core/shm_segment.h"

namespace synk {

struct ShmLocation {
  int32_t rank = -1;
  int32_t segment = -1;
  uint64_t offset = 0;
  uint64_t segment_bytes = 0;
};

class ShmHeap {
 public:
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kMinSegmentBytes = size_t{16} << 20;

  ShmHeap(std::string session_prefix, int rank);
  ~ShmHeap();
  ShmHeap(const ShmHeap&) = delete;
  ShmHeap& operator=(const ShmHeap&) = delete;

  // kAlignment-aligned; allocate(0) returns a unique pointer. Throws SystemError when /dev/shm
  // is full (the message names the free space).
  void* allocate(size_t bytes);
  void release(void* pointer) noexcept;

  // Where an address inside one of this rank's allocations lives, or nullopt if not in this heap.
  std::optional<ShmLocation> locate(const void* pointer) const;
  // The address, in this process, of a location in any rank's heap (own rank included). Maps the
  // peer's segment on first use.
  void* resolve(const ShmLocation& location);

  // Called with (base, bytes) of every new segment of this heap: the CUDA backend pins them.
  // Segments that already exist are reported when the observer is set.
  void setSegmentObserver(std::function<void(void*, size_t)> observer);

  int rank() const { return rank_; }
  size_t reservedBytes() const;

 private:
  struct Segment;
  std::string segmentName(int rank, int index) const;
  Segment& newSegment(size_t min_bytes);

  std::string prefix_;
  int rank_;
  std::vector<std::unique_ptr<Segment>> segments_;
  std::map<uintptr_t, int> by_base_;                 // own segment base -> index
  std::map<std::pair<int, int>, ShmSegment> peers_;  // (rank, index) -> mapping
  std::function<void(void*, size_t)> observer_;
};

}  // namespace synk
