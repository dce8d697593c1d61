// A call's window update buffers (Communicator::allocateWindow, NCCL's symmetric memory).
//
// A model that all-reduces its update in place during the call (the mlp's summed SGD shares)
// gains when that buffer is a window: NCCL's symmetric kernels leave more of the GPU to the
// compute they overlap (2 x H200, the mlp at batch 512: a step 4.76 -> 4.50 ms). A window is
// collective twice over: it is allocated and registered by every rank together, and NCCL finds
// a peer's part of a collective by window and offset, so in one all-reduce every rank's buffer
// must lie at the same offset of the same window. Nothing keeps buffers alike across ranks by
// itself (a rank's variable can be reshaped alone), so the ranks agree, per call:
//   - which calls: the master marks an unsliced call with a large update variable
//     (CallRequest::windows; a sliced call allocates per slice, and slice counts differ by rank);
//   - per update, every rank offers its update's bytes, the window number its update buffer
//     lies in (-1: none) and the numbers of its free windows that would hold it (windows a
//     buffer let go of: Device::unusedWindows), in one exchange, before the plugin runs and
//     whatever the rank's plan gave (a failed rank offers not-ok and no rank computes);
//   - all bytes equal and large, all in the same window: the buffers are used as they are;
//     all bytes equal and large otherwise: every rank takes the smallest window free on every
//     rank, else a new one, in update order (the buffer it replaces is freed if plain, made
//     free if a window: a window leaves the communicator only when it closes);
//     bytes unequal: no window for that update this call.
// So windows that leave the rotation (a rank reshaped alone, asLocal, an all_gather's swap) are
// handed out again once every rank has let go of them, instead of piling up.
// An update that gets no window this call leaves any window its buffer was (made free), so that
// in a call with windows every buffer the model may write lies in an agreed window or in none,
// alike on every rank. Every all-reduce of such a call then runs on the communicator that holds
// the windows (AllReduceArgs::window_call: one communicator in a step's CUDA graph; a second
// cost 0.17 ms a step), those in an agreed buffer in its window (InCallCollectives); every other
// collective runs where windows are never registered. Buffers rotate between a
// call's update buffer, its accumulator and the variable's storage, so after three calls every
// buffer of the rotation is a window and the agreement allocates nothing more.
#include <algorithm>
#include <vector>

#include "synk/core/communicator.h"
#include "synk/core/device.h"
#include "synk/core/step/call_exec.h"

namespace synk::detail {

namespace {

// Free windows a rank offers per update (the smallest numbers that hold the update).
constexpr size_t kFreeOffered = 4;
// bytes, window, how many free, the free windows' numbers.
constexpr size_t kOffer = 2 * sizeof(uint64_t) + sizeof(uint32_t) + kFreeOffered * sizeof(int64_t);

// Numbers of this rank's free windows that hold `bytes`, smallest first, at most kFreeOffered.
std::vector<int64_t> freeWindowsFor(const Device& device, const Communicator& comm, size_t bytes) {
  std::vector<int64_t> numbers;
  for (const void* window : device.unusedWindows()) {
    const int64_t number = comm.windowOf(window, bytes);
    if (number >= 0) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  if (numbers.size() > kFreeOffered) numbers.resize(kFreeOffered);
  return numbers;
}

}  // namespace

bool CallExecution::agreeOnWindows(bool ok) {
  Communicator& comm = *rank_.default_communicator;
  const size_t n_updates = spec_.updates.size();
  // Every condition is the same on every rank: the request, the spec, the backend.
  if (request_.windows == 0 || rank_.size < 2 || !comm.hasWindows() || n_updates == 0 ||
      n_updates * kOffer + sizeof(uint64_t) > kExchangeBytes) {  // exchange()'s size word
    return true;
  }
  ByteWriter& mine = offer_;
  mine.clear();
  for (size_t u = 0; u < n_updates; ++u) {
    const VariableStorage& var = model_.variables[static_cast<size_t>(binding_.update_vars[u])];
    const DeviceBuffer& slice = scratch_.update_slice[u];
    const size_t bytes = var.bytes();
    const bool fits = slice && slice.capacity() >= bytes;
    const std::vector<int64_t> free = freeWindowsFor(device_, comm, bytes);
    mine.put<uint64_t>(bytes);
    mine.put<int64_t>(ok && fits ? comm.windowOf(slice.data(), bytes) : -1);
    mine.put<uint32_t>(static_cast<uint32_t>(free.size()));
    for (size_t k = 0; k < kFreeOffered; ++k)
      mine.put<int64_t>(k < free.size() ? free[k] : -1);
  }
  ExchangeResult all = exchange(rank_.barrier(), waiter_, ok, mine);
  if (!all.all_ok) return false;  // a rank failed its plan: nobody computes, the call fails
  struct Offers {
    uint64_t bytes = 0;
    int64_t window = -1;
    bool same_bytes = true, same_window = true;
    std::vector<int64_t> free_everywhere;  // free windows every rank offered
  };
  std::vector<Offers> offers(n_updates);
  for (int r = 0; r < rank_.size; ++r) {
    ByteReader& from = all.from[static_cast<size_t>(r)];
    for (size_t u = 0; u < n_updates; ++u) {
      Offers& o = offers[u];
      const auto b = from.get<uint64_t>();
      const auto w = from.get<int64_t>();
      const auto n_free = from.get<uint32_t>();
      std::vector<int64_t> free;
      for (size_t k = 0; k < kFreeOffered; ++k) {
        const auto f = from.get<int64_t>();
        if (k < n_free) free.push_back(f);
      }
      if (r == 0) {
        o.bytes = b;
        o.window = w;
        o.free_everywhere = free;
      } else {
        std::erase_if(o.free_everywhere, [&](int64_t f) {
          return std::find(free.begin(), free.end(), f) == free.end();
        });
      }
      o.same_bytes = o.same_bytes && b == o.bytes;
      o.same_window = o.same_window && w == o.window;
    }
  }
  std::vector<int64_t> taken;  // free windows handed out in this call
  for (size_t u = 0; u < n_updates; ++u) {
    const Offers& o = offers[u];
    DeviceBuffer& slice = scratch_.update_slice[u];
    if (!o.same_bytes || o.bytes < kWindowMinBytes) {
      // No window for this update this call, so its buffer must lie in none: this call's
      // all-reduces run on the windows' communicator, where a window kept from an earlier call
      // (the variable shrank, or differs by rank) would be this rank's alone. Made free again.
      if (slice && comm.windowOf(slice.data(), 1) >= 0) slice = DeviceBuffer();
      continue;
    }
    if (!o.same_window || o.window < 0) {
      // A window free on every rank (the same number: the same window everywhere), else a new
      // one. The buffer it replaces is freed if plain, made free again if a window.
      void* memory = nullptr;
      const auto untaken = std::find_if(  // each holds o.bytes (freeWindowsFor)
          o.free_everywhere.begin(), o.free_everywhere.end(), [&](int64_t number) {
            return std::find(taken.begin(), taken.end(), number) == taken.end();
          });
      if (untaken != o.free_everywhere.end()) {
        memory = comm.windowAt(*untaken);
        taken.push_back(*untaken);
      }
      slice = DeviceBuffer();
      if (memory == nullptr) memory = comm.allocateWindow(o.bytes, waiter_);
      if (memory == nullptr) return true;  // no windows (on every rank alike): plain buffers
      device_.adoptWindow(memory);         // the communicator's: never freed by the device
      slice.adopt(device_, memory, o.bytes);
    }
    windows_.push_back({slice.data(), o.bytes});
  }
  if (!windows_.empty()) collectives_.setWindows(&windows_);
  return true;
}

}  // namespace synk::detail
