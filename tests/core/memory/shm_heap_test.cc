// ShmHeap: allocation, the free list, locate/resolve across heaps of one session, the observer.
// Two heaps of different ranks in one process map the same segments at different addresses,
// which is what peers' processes do (the collectives tests cover the forked case).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "synk/core/error.h"
#include "synk/core/shm_heap.h"

namespace synk {
namespace {

constexpr size_t kSegment = ShmHeap::kMinSegmentBytes;

// A session prefix whose segments are removed when the test ends, even if it fails.
struct Prefix {
  std::string name = sessionShmPrefix(getpid(), randomToken());
  ~Prefix() { removeSegmentsWithPrefix(name); }
  int segments() const { return countSegmentsWithPrefix(name); }
};

bool aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % ShmHeap::kAlignment == 0;
}

TEST_CASE("heap allocations are aligned, distinct and usable", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  CHECK(heap.reservedBytes() == 0);
  CHECK(prefix.segments() == 0);
  std::set<void*> seen;
  for (size_t bytes : {0, 0, 1, 255, 256, 257, 1000, 65536}) {
    void* p = heap.allocate(bytes);
    CHECK(aligned(p));
    CHECK(seen.insert(p).second);
    std::memset(p, 0xab, std::max<size_t>(bytes, 1));
  }
  // Small allocations share one segment named after the rank.
  CHECK(prefix.segments() == 1);
  CHECK(countSegmentsWithPrefix(prefix.name + "h0-0") == 1);
  CHECK(heap.reservedBytes() == kSegment);
  for (void* p : seen)
    heap.release(p);
}

TEST_CASE("heap refuses absurd sizes", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  CHECK_THROWS_AS(heap.allocate(SIZE_MAX), SystemError);
  CHECK(prefix.segments() == 0);
}

TEST_CASE("heap locate finds own allocations only", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 3);
  auto* p = static_cast<std::byte*>(heap.allocate(1000));
  const auto at = heap.locate(p + 10);
  REQUIRE(at.has_value());
  CHECK(at->rank == 3);
  CHECK(at->segment == 0);
  CHECK(at->segment_bytes == kSegment);
  CHECK(heap.resolve(*at) == p + 10);
  int on_stack = 0;
  CHECK_FALSE(heap.locate(&on_stack).has_value());
  std::vector<char> on_heap(100);
  CHECK_FALSE(heap.locate(on_heap.data()).has_value());
  CHECK_FALSE(heap.locate(nullptr).has_value());
  heap.release(p);
}

TEST_CASE("heap release coalesces free blocks", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  const size_t sixteenth = kSegment / 16;  // small enough to share a segment, twice too
  void* a = heap.allocate(sixteenth);
  void* b = heap.allocate(sixteenth);
  void* c = heap.allocate(sixteenth);
  CHECK(static_cast<std::byte*>(b) == static_cast<std::byte*>(a) + sixteenth);
  heap.release(a);
  heap.release(b);
  // a and b merged: a block of twice the size fits where a was.
  void* ab = heap.allocate(2 * sixteenth);
  CHECK(ab == a);
  heap.release(c);
  heap.release(ab);
  // Everything merged back: the whole segment is one block again.
  void* all = heap.allocate(kSegment / 4 - ShmHeap::kAlignment);
  CHECK(all == a);
  CHECK(prefix.segments() == 1);
  heap.release(all);
}

TEST_CASE("heap fills a segment, then opens another", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  const size_t block = kSegment / 8;
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i)
    blocks.push_back(heap.allocate(block));
  CHECK(prefix.segments() == 1);
  void* more = heap.allocate(block);
  CHECK(prefix.segments() == 2);
  CHECK(heap.locate(more)->segment == 1);
  heap.release(blocks[3]);
  CHECK(heap.allocate(block) == blocks[3]);  // first fit reuses the hole
}

TEST_CASE("large heap allocations get a segment of their own", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  void* small = heap.allocate(64);
  const size_t large = 3 * kSegment;
  void* big = heap.allocate(large);
  CHECK(aligned(big));
  const auto at = heap.locate(big);
  REQUIRE(at.has_value());
  CHECK(at->offset == 0);
  CHECK(at->segment_bytes >= large);
  CHECK(heap.locate(static_cast<std::byte*>(big) + large - 1)->segment == at->segment);
  CHECK(prefix.segments() == 2);
  // A released large segment serves the next large request that fits it; it is never unmapped.
  heap.release(big);
  CHECK(heap.allocate(large - 4096) == big);
  CHECK(prefix.segments() == 2);
  CHECK(heap.locate(small)->segment == 0);
}

TEST_CASE("heap resolve maps a peer's segment once", "[core]") {
  Prefix prefix;
  ShmHeap owner(prefix.name, 0);
  ShmHeap peer(prefix.name, 1);
  auto* p = static_cast<int*>(owner.allocate(64 * sizeof(int)));
  for (int i = 0; i < 64; ++i)
    p[i] = i;
  const auto at = owner.locate(p + 5);
  REQUIRE(at.has_value());
  auto* q = static_cast<int*>(peer.resolve(*at));
  CHECK(q != p + 5);  // a second mapping of the same memory
  CHECK(q[0] == 5);
  q[1] = -1;
  CHECK(p[6] == -1);
  CHECK(peer.resolve(*at) == q);  // cached
  // The peer's own segments are separate names.
  void* mine = peer.allocate(8);
  CHECK(peer.locate(mine)->rank == 1);
  CHECK(prefix.segments() == 2);
}

TEST_CASE("heap resolve rejects locations that do not exist", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  CHECK_THROWS_AS(heap.resolve(ShmLocation{0, 4, 0, kSegment}), InternalError);
  CHECK_THROWS_AS(heap.resolve(ShmLocation{1, 0, 0, kSegment}), SystemError);
  CHECK_THROWS_AS(heap.resolve(ShmLocation{1, 0, kSegment + 1, kSegment}), InternalError);
}

TEST_CASE("heap observer sees every segment", "[core]") {
  Prefix prefix;
  ShmHeap heap(prefix.name, 0);
  heap.allocate(10);
  std::vector<std::pair<void*, size_t>> seen;
  heap.setSegmentObserver([&](void* base, size_t bytes) { seen.emplace_back(base, bytes); });
  REQUIRE(seen.size() == 1);  // the existing segment, reported when the observer is set
  CHECK(seen[0].second == kSegment);
  void* big = heap.allocate(kSegment);
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].first == big);
  CHECK(seen[1].second == kSegment);
  heap.allocate(10);  // fits the existing segment: nothing new
  CHECK(seen.size() == 2);
}

TEST_CASE("heap destructor unmaps but leaves the names to the session", "[core]") {
  Prefix prefix;
  ShmLocation at;
  {
    ShmHeap heap(prefix.name, 0);
    at = *heap.locate(heap.allocate(100));
  }
  CHECK(prefix.segments() == 1);
  ShmHeap peer(prefix.name, 1);
  CHECK(peer.resolve(at) != nullptr);
}

}  // namespace
}  // namespace synk
