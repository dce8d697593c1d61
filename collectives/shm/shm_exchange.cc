#include "synk/collectives/shm/shm_exchange.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {
namespace {

static_assert(ShmExchange::kMaxSlots >= 2);

// Copied in and out with memcpy: the exchange area is raw bytes.
void publishLocations(Barrier& barrier, const ShmLocation* locations, size_t slots) {
  std::memcpy(barrier.outbox(ShmExchange::kErrorBytes + slots * sizeof(ShmLocation)) +
                  ShmExchange::kErrorBytes,
              locations, slots * sizeof(ShmLocation));
}

ShmLocation locationOf(const Barrier& barrier, int rank, size_t k) {
  ShmLocation location;
  std::memcpy(&location,
              barrier.exchangeOf(rank) + ShmExchange::kErrorBytes + k * sizeof(ShmLocation),
              sizeof location);
  return location;
}

void publishError(Barrier& barrier, std::exception_ptr failure) {
  std::string message = "unknown exception";
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
  }
  message.resize(std::min(message.size(), ShmExchange::kErrorBytes - 1));
  std::memcpy(barrier.outbox(message.size() + 1), message.c_str(), message.size() + 1);
}

std::string errorOf(const Barrier& barrier, int rank) {
  const auto* text = reinterpret_cast<const char*>(barrier.exchangeOf(rank));
  return std::string(text, strnlen(text, ShmExchange::kErrorBytes - 1));
}

size_t roundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

}  // namespace

namespace shm_detail {

void requireBuffer(const void* pointer, size_t bytes, const char* what, const char* which) {
  if (bytes > 0 && !pointer) {
    throw InvalidArgument(str(what, ": ", which, " is null but ", bytes, " bytes are needed"));
  }
}

}  // namespace shm_detail

ShmExchange::ShmExchange(ProcessGroup& group, ShmHeap& heap, int first, int end)
    : group_(group), heap_(heap), first_(first), end_(end) {}

ShmExchange::~ShmExchange() {
  heap_.release(workspace_);
}

std::byte* ShmExchange::workspace(size_t bytes) {
  if (bytes > workspace_bytes_) {
    heap_.release(workspace_);
    workspace_ = nullptr;
    workspace_bytes_ = 0;
    workspace_ = heap_.allocate(bytes);
    workspace_bytes_ = bytes;
  }
  return static_cast<std::byte*>(workspace_);
}

// Buffers outside the heap (or running past the end of their segment) cannot be mapped by the
// peers: they are staged through the workspace.
void ShmExchange::expose(const char* what, std::span<Exposed> mine) {
  size_t staged_bytes = 0;
  for (Exposed& e : mine) {
    e.local = static_cast<std::byte*>(const_cast<void*>(e.user));
    e.staged = false;
    if (e.bytes == 0) continue;
    shm_detail::requireBuffer(e.user, e.bytes, what,
                              e.output ? "the result buffer" : "the input buffer");
    const auto where = heap_.locate(e.user);
    if (where && where->offset + e.bytes <= where->segment_bytes) continue;
    e.staged = true;
    staged_bytes += roundUp(e.bytes, ShmHeap::kAlignment);
  }
  if (staged_bytes == 0) return;
  std::byte* next = workspace(staged_bytes);
  for (Exposed& e : mine) {
    if (!e.staged) continue;
    e.local = next;
    next += roundUp(e.bytes, ShmHeap::kAlignment);
    if (e.input) std::memcpy(e.local, e.user, e.bytes);
  }
}

void ShmExchange::enter(const char* what, Waiter& waiter, std::span<Exposed> mine, size_t slots) {
  Barrier& barrier = group_.barrier();
  std::exception_ptr failure;
  try {
    expose(what, mine);
    locations_.resize(slots);
    for (size_t k = 0; k < slots; ++k) {
      locations_[k] =
          k < mine.size() && mine[k].bytes > 0 ? *heap_.locate(mine[k].local) : ShmLocation{};
    }
    publishLocations(barrier, locations_.data(), slots);
  } catch (...) {
    failure = std::current_exception();
    publishError(barrier, failure);
  }
  const bool all_ok = barrier.arrive(waiter, BarrierSite::CollectiveIn, !failure);
  if (failure) std::rethrow_exception(failure);
  if (!all_ok) throwPeerFailure(what);
}

ShmExchange::Peers ShmExchange::resolve(std::span<Exposed> mine, size_t slots) {
  const Barrier& barrier = group_.barrier();
  const int size = group_.size();
  const int self = group_.rank();
  if (peers_.size() < static_cast<size_t>(size) * slots) peers_.resize(size * slots);
  for (int r = 0; r < size; ++r) {
    std::byte** row = peers_.data() + static_cast<size_t>(r) * slots;
    for (size_t k = 0; k < slots; ++k) {
      if (r == self) {
        row[k] = k < mine.size() && mine[k].bytes > 0 ? mine[k].local : nullptr;
        continue;
      }
      const ShmLocation theirs =
          r >= first_ && r < end_ ? locationOf(barrier, r, k) : ShmLocation{};
      row[k] = theirs.rank >= 0 ? static_cast<std::byte*>(heap_.resolve(theirs)) : nullptr;
    }
  }
  return Peers{peers_.data(), slots};
}

void ShmExchange::leave(const char* what, Waiter& waiter, std::span<Exposed> mine,
                        std::exception_ptr failure) {
  Barrier& barrier = group_.barrier();
  if (failure) publishError(barrier, failure);
  const bool all_ok = barrier.arrive(waiter, BarrierSite::CollectiveOut, !failure);
  if (failure) std::rethrow_exception(failure);
  if (!all_ok) throwPeerFailure(what);
  for (const Exposed& e : mine) {
    if (e.staged && e.output) std::memcpy(const_cast<void*>(e.user), e.local, e.bytes);
  }
}

void ShmExchange::failOnThisRank(Waiter& waiter, std::exception_ptr failure) {
  if (group_.size() > 1) {  // one rank runs no protocol (each collective's size() == 1 path)
    Barrier& barrier = group_.barrier();
    publishError(barrier, failure);
    barrier.arrive(waiter, BarrierSite::CollectiveIn, false);
  }
  std::rethrow_exception(failure);
}

void ShmExchange::throwPeerFailure(const char* what) const {
  const Barrier& barrier = group_.barrier();
  for (int r = 0; r < group_.size(); ++r) {
    if (barrier.okOf(r)) continue;
    throw RankError(r, str(what, ": rank ", r, " failed: ", errorOf(barrier, r)));
  }
  throw InternalError(str(what, ": a rank failed but none says which"));
}

}  // namespace synk
