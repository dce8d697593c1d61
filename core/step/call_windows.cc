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
//   - per update, every rank offers its update's bytes and the window number its update buffer
//     lies in (-1: none), in one exchange, before the plugin runs and whatever the rank's plan
//     gave (a failed rank offers not-ok and the call fails everywhere);
//   - all bytes equal and large, all in the same window: the buffers are used as they are;
//     all bytes equal and large otherwise: every rank takes a new window, in update order (the
//     plain buffer is freed; a window a rank drops stays with the communicator);
//     bytes unequal: no window for that update this call.
// In-call all-reduces that lie wholly in an agreed buffer run in its window (InCallCollectives);
// every other collective runs where windows are never registered. Buffers rotate between a
// call's update buffer, its accumulator and the variable's storage, so after three calls every
// buffer of the rotation is a window and the agreement allocates nothing more.
#include "synk/core/communicator.h"
#include "synk/core/step/call_exec.h"

namespace synk::detail {

bool CallExecution::agreeOnWindows(bool ok) {
  Communicator& comm = *rank_.default_communicator;
  const size_t n_updates = spec_.updates.size();
  // Every condition is the same on every rank: the request, the spec, the backend.
  constexpr size_t kOffer = sizeof(uint64_t) + sizeof(int64_t);
  if (request_.windows == 0 || rank_.size < 2 || !comm.hasWindows() || n_updates == 0 ||
      n_updates * kOffer > kExchangeBytes) {
    return true;
  }
  ByteWriter& mine = offer_;
  mine.clear();
  for (size_t u = 0; u < n_updates; ++u) {
    const VariableStorage& var = model_.variables[static_cast<size_t>(binding_.update_vars[u])];
    const DeviceBuffer& slice = scratch_.update_slice[u];
    const size_t bytes = var.bytes();
    const bool fits = slice && slice.capacity() >= bytes;
    mine.put<uint64_t>(bytes);
    mine.put<int64_t>(ok && fits ? comm.windowOf(slice.data(), bytes) : -1);
  }
  ExchangeResult all = exchange(rank_.barrier(), waiter_, ok, mine);
  if (!all.all_ok) return false;  // a rank failed its plan: nobody computes, the call fails
  std::vector<uint64_t> bytes(n_updates);
  std::vector<int64_t> window(n_updates);
  std::vector<bool> same_bytes(n_updates, true), same_window(n_updates, true);
  for (int r = 0; r < rank_.size; ++r) {
    ByteReader& from = all.from[static_cast<size_t>(r)];
    for (size_t u = 0; u < n_updates; ++u) {
      const auto b = from.get<uint64_t>();
      const auto w = from.get<int64_t>();
      if (r == 0) {
        bytes[u] = b;
        window[u] = w;
      }
      same_bytes[u] = same_bytes[u] && b == bytes[u];
      same_window[u] = same_window[u] && w == window[u];
    }
  }
  for (size_t u = 0; u < n_updates; ++u) {
    if (!same_bytes[u] || bytes[u] < kWindowMinBytes) continue;
    DeviceBuffer& slice = scratch_.update_slice[u];
    if (!same_window[u] || window[u] < 0) {
      slice = DeviceBuffer();  // a plain buffer is freed; a window stays with the communicator
      void* memory = comm.allocateWindow(bytes[u], waiter_);
      if (memory == nullptr) return true;  // no windows (on every rank alike): plain buffers
      device_.adoptWindow(memory);         // the communicator's: never freed by the device
      slice.adopt(device_, memory, bytes[u]);
    }
    windows_.push_back({slice.data(), bytes[u]});
  }
  if (!windows_.empty()) collectives_.setWindows(&windows_);
  return true;
}

}  // namespace synk::detail
