#include "synk/core/shm_heap.h"

#include <sys/mman.h>

#include <cerrno>
#include <iterator>

#include "synk/core/error.h"
#include "synk/core/log.h"

namespace synk {
namespace {

// Allocations of at least this size get a segment of their own: a shared segment would be mostly
// one block, and freeing it would leave a hole few later requests fit.
constexpr size_t kLargeBytes = ShmHeap::kMinSegmentBytes / 4;
constexpr size_t kPageBytes = 4096;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

size_t roundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

}  // namespace

struct ShmHeap::Segment {
  ShmSegment shm;
  int index = 0;
  bool dedicated = false;         // made for one large allocation
  std::map<size_t, size_t> free;  // offset -> bytes, coalesced (no two blocks touch)
  std::map<size_t, size_t> used;  // offset -> bytes

  std::byte* base() const { return static_cast<std::byte*>(shm.data()); }

  // First fit; returns the offset or nullopt.
  std::optional<size_t> take(size_t bytes) {
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < bytes) continue;
      const size_t offset = it->first;
      const size_t rest = it->second - bytes;
      free.erase(it);
      if (rest > 0) free.emplace(offset + bytes, rest);
      used.emplace(offset, bytes);
      return offset;
    }
    return std::nullopt;
  }

  bool give(size_t offset) {
    const auto it = used.find(offset);
    if (it == used.end()) return false;
    size_t begin = offset;
    size_t end = offset + it->second;
    used.erase(it);
    auto next = free.lower_bound(begin);
    if (next != free.end() && next->first == end) {
      end += next->second;
      next = free.erase(next);
    }
    if (next != free.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + prev->second == begin) {
        begin = prev->first;
        free.erase(prev);
      }
    }
    free.emplace(begin, end - begin);
    return true;
  }
};

ShmHeap::ShmHeap(std::string session_prefix, int rank)
    : prefix_(std::move(session_prefix)), rank_(rank) {}

// Unmaps only: peers may still hold mappings of these names, and the master's shutdown removes
// every name with the session prefix.
ShmHeap::~ShmHeap() = default;

std::string ShmHeap::segmentName(int rank, int index) const {
  return str(prefix_, "h", rank, "-", index);
}

ShmHeap::Segment& ShmHeap::newSegment(size_t min_bytes) {
  const int index = static_cast<int>(segments_.size());
  const size_t bytes = roundUp(min_bytes, kPageBytes);
  auto segment = std::make_unique<Segment>();
  segment->shm = ShmSegment::create(segmentName(rank_, index), bytes,
                                    str("the shared-memory heap of rank ", rank_));
  segment->index = index;
  segment->free.emplace(0, bytes);
  Segment& added = *segment;
  by_base_.emplace(reinterpret_cast<uintptr_t>(added.base()), index);
  segments_.push_back(std::move(segment));
  if (observer_) observer_(added.base(), bytes);
  return added;
}

void* ShmHeap::allocate(size_t bytes) {
  // Rounding a size near SIZE_MAX would wrap around to a small block.
  if (bytes > (size_t{1} << 60)) {
    throw SystemError(str("allocating ", bytes, " bytes of shared memory"), ENOMEM);
  }
  const size_t size = roundUp(bytes == 0 ? 1 : bytes, kAlignment);
  if (size >= kLargeBytes) {
    // Reuse an idle dedicated segment that fits without wasting more than the request.
    Segment* best = nullptr;
    for (auto& segment : segments_) {
      const size_t room = segment->shm.size();
      if (segment->dedicated && segment->used.empty() && room >= size && room <= 2 * size &&
          (!best || room < best->shm.size())) {
        best = segment.get();
      }
    }
    if (!best) {
      best = &newSegment(size);
      best->dedicated = true;
    }
    return best->base() + *best->take(size);
  }
  for (auto& segment : segments_) {
    if (segment->dedicated) continue;
    if (const auto offset = segment->take(size)) return segment->base() + *offset;
  }
  Segment& segment = newSegment(kMinSegmentBytes);
  return segment.base() + *segment.take(size);
}

void ShmHeap::release(void* pointer) noexcept {
  if (!pointer) return;
  const auto where = locate(pointer);
  if (!where || !segments_[where->segment]->give(where->offset)) {
    // A bug in the caller; freeing memory it does not own must not corrupt the free lists.
    logWarning("ShmHeap::release of ", pointer, ", which rank ", rank_, " never allocated");
  }
}

std::optional<ShmLocation> ShmHeap::locate(const void* pointer) const {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  auto it = by_base_.upper_bound(address);
  if (it == by_base_.begin()) return std::nullopt;
  --it;
  const Segment& segment = *segments_[it->second];
  const uint64_t offset = address - it->first;
  if (offset >= segment.shm.size()) return std::nullopt;
  return ShmLocation{rank_, segment.index, offset, segment.shm.size()};
}

void* ShmHeap::resolve(const ShmLocation& location) {
  if (location.offset > location.segment_bytes) {
    throw InternalError(str("ShmHeap::resolve: offset ", location.offset, " is past the end of a ",
                            location.segment_bytes, "-byte segment"));
  }
  if (location.rank == rank_) {
    if (location.segment < 0 || location.segment >= static_cast<int>(segments_.size())) {
      throw InternalError(
          str("ShmHeap::resolve: rank ", rank_, " has no segment ", location.segment));
    }
    return segments_[location.segment]->base() + location.offset;
  }
  const auto key = std::make_pair(location.rank, location.segment);
  auto it = peers_.find(key);
  if (it == peers_.end()) {
    ShmSegment mapping =
        ShmSegment::open(segmentName(location.rank, location.segment), location.segment_bytes);
    // Fault the page tables in with one call instead of one fault per page at first touch
    // (best effort: older kernels lack MADV_POPULATE_WRITE, and lazy faults still work).
    madvise(mapping.data(), mapping.size(), MADV_POPULATE_WRITE);
    it = peers_.emplace(key, std::move(mapping)).first;
  }
  return static_cast<std::byte*>(it->second.data()) + location.offset;
}

void ShmHeap::setSegmentObserver(std::function<void(void*, size_t)> observer) {
  observer_ = std::move(observer);
  if (!observer_) return;
  for (const auto& segment : segments_)
    observer_(segment->base(), segment->shm.size());
}

size_t ShmHeap::reservedBytes() const {
  size_t total = 0;
  for (const auto& segment : segments_)
    total += segment->shm.size();
  return total;
}

}  // namespace synk
