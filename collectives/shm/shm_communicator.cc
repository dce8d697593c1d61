#include "synk/collectives/shm/shm_communicator.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>

#include "synk/collectives/shm/reduce_kernels_impl.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"

namespace synk {
namespace {

using shm_detail::kBlockBytes;
using shm_detail::ownedRange;
using shm_detail::reduceRange;

// The barrier outbox of one collective: the locations of the buffers this rank exposes before
// CollectiveIn, then, only if it failed, its message. Copied in and out with memcpy: the exchange
// area is raw bytes. The message comes first: the locations of a list collective fill the rest.
constexpr size_t kErrorBytes = 1024;
constexpr size_t kMaxSlots = (kExchangeBytes - kErrorBytes) / sizeof(ShmLocation);
static_assert(kMaxSlots >= 2);

void publishLocations(Barrier& barrier, const ShmLocation* locations, size_t slots) {
  std::memcpy(barrier.outbox(kErrorBytes + slots * sizeof(ShmLocation)) + kErrorBytes, locations,
              slots * sizeof(ShmLocation));
}

ShmLocation locationOf(const Barrier& barrier, int rank, size_t k) {
  ShmLocation location;
  std::memcpy(&location, barrier.exchangeOf(rank) + kErrorBytes + k * sizeof(ShmLocation),
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
  message.resize(std::min(message.size(), kErrorBytes - 1));
  std::memcpy(barrier.outbox(message.size() + 1), message.c_str(), message.size() + 1);
}

std::string errorOf(const Barrier& barrier, int rank) {
  const auto* text = reinterpret_cast<const char*>(barrier.exchangeOf(rank));
  return std::string(text, strnlen(text, kErrorBytes - 1));
}

size_t roundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

void requireBuffer(const void* pointer, size_t bytes, const char* what, const char* which) {
  if (bytes > 0 && !pointer) {
    throw InvalidArgument(str(what, ": ", which, " is null but ", bytes, " bytes are needed"));
  }
}

}  // namespace

ShmCommunicator::ShmCommunicator(ProcessGroup& group, ShmHeap& heap)
    : Communicator(group.rank(), group.size()), group_(group), heap_(heap) {}

ShmCommunicator::~ShmCommunicator() {
  heap_.release(workspace_);
}

size_t ShmCommunicator::maxListRound() {
  return kMaxSlots;
}

std::byte* ShmCommunicator::workspace(size_t bytes) {
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
void ShmCommunicator::expose(const char* what, std::span<Exposed> mine) {
  size_t staged_bytes = 0;
  for (Exposed& e : mine) {
    e.local = static_cast<std::byte*>(const_cast<void*>(e.user));
    e.staged = false;
    if (e.bytes == 0) continue;
    requireBuffer(e.user, e.bytes, what, e.output ? "the result buffer" : "the input buffer");
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

template <typename Work>
void ShmCommunicator::run(const char* what, Waiter& waiter, std::span<Exposed> mine, size_t slots,
                          Work&& work) {
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
  bool all_ok = barrier.arrive(waiter, BarrierSite::CollectiveIn, !failure);
  if (failure) std::rethrow_exception(failure);
  if (!all_ok) throwPeerFailure(what);

  try {
    if (peers_.size() < static_cast<size_t>(size()) * slots) peers_.resize(size() * slots);
    for (int r = 0; r < size(); ++r) {
      std::byte** row = peers_.data() + static_cast<size_t>(r) * slots;
      for (size_t k = 0; k < slots; ++k) {
        if (r == rank()) {
          row[k] = k < mine.size() ? mine[k].local : nullptr;
          continue;
        }
        const ShmLocation theirs = locationOf(barrier, r, k);
        row[k] = theirs.rank >= 0 ? static_cast<std::byte*>(heap_.resolve(theirs)) : nullptr;
      }
    }
    work(Peers{peers_.data(), slots});
  } catch (...) {
    failure = std::current_exception();
    publishError(barrier, failure);
  }
  all_ok = barrier.arrive(waiter, BarrierSite::CollectiveOut, !failure);
  if (failure) std::rethrow_exception(failure);
  if (!all_ok) throwPeerFailure(what);

  for (const Exposed& e : mine) {
    if (e.staged && e.output) std::memcpy(const_cast<void*>(e.user), e.local, e.bytes);
  }
}

void ShmCommunicator::failOnThisRank(Waiter& waiter, std::exception_ptr failure) {
  if (size() > 1) {  // one rank runs no protocol (see each collective's size() == 1 path)
    Barrier& barrier = group_.barrier();
    publishError(barrier, failure);
    barrier.arrive(waiter, BarrierSite::CollectiveIn, false);
  }
  std::rethrow_exception(failure);
}

void ShmCommunicator::throwPeerFailure(const char* what) const {
  const Barrier& barrier = group_.barrier();
  for (int r = 0; r < size(); ++r) {
    if (barrier.okOf(r)) continue;
    throw RankError(r, str(what, ": rank ", r, " failed: ", errorOf(barrier, r)));
  }
  throw InternalError(str(what, ": a rank failed but none says which"));
}

void ShmCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  if (args.send != nullptr && args.send != args.buffer) return allReduceOutOfPlace(args, waiter);
  // One rank: the sum is the buffer itself and avg scales by 1.
  if (size() == 1) return;
  Exposed mine[1] = {
      {.user = args.buffer, .bytes = args.count * elem, .input = true, .output = true}};
  run("allReduce", waiter, mine, kSingleSlots, [&](const Peers& peers) {
    std::byte* buffers[kMaxRanks];
    for (int r = 0; r < size(); ++r)
      buffers[r] = peers.at(r, 0);
    const auto [begin, end] = ownedRange(args.count, elem, rank(), size());
    reduceRange(buffers, size(), buffers, size(), begin, end, args.dtype, args.op, size());
  });
}

// Each rank's input and result are exposed: the owner of a range reads every rank's input and
// writes every rank's result, as the in-place form does on one buffer.
void ShmCommunicator::allReduceOutOfPlace(const AllReduceArgs& args, Waiter& waiter) {
  const size_t elem = dtypeSize(args.dtype);
  const size_t bytes = args.count * elem;
  if (size() == 1) {
    requireBuffer(args.buffer, bytes, "allReduce", "buffer");
    std::memcpy(args.buffer, args.send, bytes);
    return;
  }
  Exposed mine[2] = {{.user = args.send, .bytes = bytes, .input = true},
                     {.user = args.buffer, .bytes = bytes, .output = true}};
  run("allReduce", waiter, mine, kSingleSlots, [&](const Peers& peers) {
    const std::byte* sends[kMaxRanks];
    std::byte* results[kMaxRanks];
    for (int r = 0; r < size(); ++r) {
      sends[r] = peers.at(r, 0);
      results[r] = peers.at(r, 1);
    }
    const auto [begin, end] = ownedRange(args.count, elem, rank(), size());
    reduceRange(sends, size(), results, size(), begin, end, args.dtype, args.op, size());
  });
}

void ShmCommunicator::doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter) {
  waiter.check();
  if (size() == 1) return;
  for (size_t first = 0; first < list.size(); first += kMaxSlots) {
    allReduceRound(list.subspan(first, std::min(kMaxSlots, list.size() - first)), first, waiter);
  }
}

// Every buffer of the round in one barrier pair. A buffer of one block or less is reduced whole
// by one rank (round robin over the list: many small variables spread over the ranks); a larger
// one is split as allReduce splits it.
void ShmCommunicator::allReduceRound(std::span<const AllReduceArgs> round, size_t first_index,
                                     Waiter& waiter) {
  exposed_.resize(round.size());
  for (size_t k = 0; k < round.size(); ++k) {
    exposed_[k] = {.user = round[k].buffer,
                   .bytes = round[k].count * dtypeSize(round[k].dtype),
                   .input = true,
                   .output = true};
  }
  run("allReduce", waiter, exposed_, round.size(), [&](const Peers& peers) {
    std::byte* buffers[kMaxRanks];
    for (size_t k = 0; k < round.size(); ++k) {
      const AllReduceArgs& args = round[k];
      const size_t elem = dtypeSize(args.dtype);
      size_t begin = 0, end = args.count;
      if (args.count * elem <= kBlockBytes) {
        if (static_cast<int>((first_index + k) % static_cast<size_t>(size())) != rank()) continue;
      } else {
        std::tie(begin, end) = ownedRange(args.count, elem, rank(), size());
      }
      for (int r = 0; r < size(); ++r)
        buffers[r] = peers.at(r, k);
      reduceRange(buffers, size(), buffers, size(), begin, end, args.dtype, args.op, size());
    }
  });
}

void ShmCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  const size_t bytes = args.count * elem;
  const bool root = rank() == args.root;
  if (size() == 1) {
    requireBuffer(args.send, bytes, "reduce", "send");
    requireBuffer(args.recv, bytes, "reduce", "recv");
    if (args.recv != args.send) std::memcpy(args.recv, args.send, bytes);
    return;
  }
  // At the root recv is exposed as a second buffer even when it equals send: if it is staged,
  // reading one copy and writing the other keeps the in-place case correct.
  Exposed mine[2] = {{.user = args.send, .bytes = bytes, .input = true},
                     {.user = args.recv, .bytes = root ? bytes : 0, .output = true}};
  run("reduce", waiter, std::span<Exposed>(mine, root ? 2 : 1), kSingleSlots,
      [&](const Peers& peers) {
        const std::byte* sends[kMaxRanks];
        for (int r = 0; r < size(); ++r)
          sends[r] = peers.at(r, 0);
        std::byte* result = peers.at(args.root, 1);
        const auto [begin, end] = ownedRange(args.count, elem, rank(), size());
        reduceRange(sends, size(), &result, 1, begin, end, args.dtype, args.op, size());
      });
}

void ShmCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const bool root = rank() == args.root;
  // Out of place the root sends `send` and receives into its buffer like every rank.
  const bool copy_at_root = root && args.send != nullptr && args.send != args.buffer;
  const void* source = copy_at_root ? args.send : args.buffer;
  if (size() == 1) {
    if (copy_at_root) std::memcpy(args.buffer, source, bytes);
    return;
  }
  Exposed mine[1] = {{.user = source, .bytes = root ? bytes : 0, .input = true}};
  run("broadcast", waiter, std::span<Exposed>(mine, root ? 1 : 0), kSingleSlots,
      [&](const Peers& peers) {
        requireBuffer(args.buffer, bytes, "broadcast", "buffer");
        if (!root || copy_at_root) std::memcpy(args.buffer, peers.at(args.root, 0), bytes);
      });
}

void ShmCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                               Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  const size_t total = offsets.back() * elem;
  const size_t part = args.counts[rank()] * elem;
  const bool root = rank() == args.root;
  if (size() == 1) {
    requireBuffer(args.send, part, "gather", "send");
    requireBuffer(args.recv, total, "gather", "recv");
    if (part > 0 && args.recv != args.send) std::memcpy(args.recv, args.send, part);
    return;
  }
  Exposed mine[1] = {{.user = args.recv, .bytes = root ? total : 0, .output = true}};
  run("gather", waiter, std::span<Exposed>(mine, root ? 1 : 0), kSingleSlots,
      [&](const Peers& peers) {
        requireBuffer(args.send, part, "gather", "send");
        std::byte* dst = peers.at(args.root, 0) + offsets[rank()] * elem;
        if (part > 0 && dst != args.send) std::memcpy(dst, args.send, part);
      });
}

void ShmCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                                  Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  const size_t total = offsets.back() * elem;
  const size_t part = args.counts[rank()] * elem;
  if (size() == 1) {
    requireBuffer(args.send, part, "allGather", "send");
    requireBuffer(args.recv, total, "allGather", "recv");
    if (part > 0 && args.recv != args.send) std::memcpy(args.recv, args.send, part);
    return;
  }
  Exposed mine[1] = {{.user = args.send, .bytes = part, .input = true}};
  run("allGather", waiter, mine, kSingleSlots, [&](const Peers& peers) {
    requireBuffer(args.recv, total, "allGather", "recv");
    auto* recv = static_cast<std::byte*>(args.recv);
    // Start after this rank so the ranks do not all read rank 0's buffer at once.
    for (int k = 0; k < size(); ++k) {
      const int r = (rank() + k) % size();
      const size_t bytes = args.counts[r] * elem;
      const std::byte* src =
          r == rank() ? static_cast<const std::byte*>(args.send) : peers.at(r, 0);
      if (bytes > 0) std::memcpy(recv + offsets[r] * elem, src, bytes);
    }
  });
}

}  // namespace synk
