#include "synk/collectives/shm/shm_communicator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
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

using shm_detail::requireBuffer;
constexpr size_t kMaxSlots = ShmExchange::kMaxSlots;

}  // namespace

namespace {
std::atomic<int64_t> g_windows{0};
std::atomic<int64_t> g_window_all_reduces{0};
}  // namespace

ShmCommunicator::ShmCommunicator(ProcessGroup& group, ShmHeap& heap)
    : Communicator(group.rank(), group.size()),
      group_(group),
      heap_(heap),
      exchange_(group, heap, 0, group.size()) {
  const char* windows = std::getenv("SYNK_SHM_WINDOWS");
  windows_on_ = windows != nullptr && std::strcmp(windows, "1") == 0;
}

ShmCommunicator::~ShmCommunicator() {
  for (const Window& window : recordedWindows())
    heap_.release(window.begin);
}

void* ShmCommunicator::allocateWindow(size_t bytes, Waiter& waiter) {
  if (!hasWindows()) throw InternalError("allocateWindow: this shm communicator has no windows");
  void* memory = nullptr;
  try {
    memory = heap_.allocate(bytes);
  } catch (const std::exception&) {
    memory = nullptr;  // told to the others below: every rank then goes without
  }
  if (!group_.barrier().arrive(waiter, BarrierSite::Exchange, memory != nullptr)) {
    if (memory != nullptr) heap_.release(memory);
    return nullptr;
  }
  recordWindow(memory, bytes);
  g_windows.fetch_add(1);
  return memory;
}

ShmCommunicator::WindowCounts ShmCommunicator::windowCounts() {
  return {g_windows.load(), g_window_all_reduces.load()};
}

size_t ShmCommunicator::maxListRound() {
  return kMaxSlots;
}

void ShmCommunicator::failOnThisRank(Waiter& waiter, std::exception_ptr failure) {
  exchange_.failOnThisRank(waiter, failure);
}

void ShmCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  waiter.check();
  if (args.in_window) g_window_all_reduces.fetch_add(1);
  const size_t elem = dtypeSize(args.dtype);
  if (args.send != nullptr && args.send != args.buffer) return allReduceOutOfPlace(args, waiter);
  // One rank: the sum is the buffer itself and avg scales by 1.
  if (size() == 1) return;
  Exposed mine[1] = {
      {.user = args.buffer, .bytes = args.count * elem, .input = true, .output = true}};
  exchange_.run("allReduce", waiter, mine, kSingleSlots, [&](const Peers& peers) {
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
  exchange_.run("allReduce", waiter, mine, kSingleSlots, [&](const Peers& peers) {
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
  exchange_.run("allReduce", waiter, exposed_, round.size(), [&](const Peers& peers) {
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
  exchange_.run("reduce", waiter, std::span<Exposed>(mine, root ? 2 : 1), kSingleSlots,
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
  exchange_.run("broadcast", waiter, std::span<Exposed>(mine, root ? 1 : 0), kSingleSlots,
                [&](const Peers& peers) {
                  requireBuffer(args.buffer, bytes, "broadcast", "buffer");
                  if (!root || copy_at_root)
                    std::memcpy(args.buffer, peers.at(args.root, 0), bytes);
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
  exchange_.run("gather", waiter, std::span<Exposed>(mine, root ? 1 : 0), kSingleSlots,
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
  exchange_.run("allGather", waiter, mine, kSingleSlots, [&](const Peers& peers) {
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
