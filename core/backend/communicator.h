#pragma once
// Collective operations among the ranks of a session, on device memory.
//
// Every rank calls the same operation with matching arguments (counts, dtype, op, root). The
// runtime checks that before calling (core/process/control/exchange.h compares each rank's
// fingerprint through the control block), so implementations may assume it; they must still never
// hang forever: every wait polls the Waiter passed in (deadline, abort flag, peer liveness).
//
// Buffers are device memory of the rank's Device (core/device.h). Completion: an operation has
// completed when it returns, or it is ordered on the device's stream (NCCL), so a later
// Device::copy or synchronize observes its result. Busbw factors and algorithms are documented
// in collectives/README.md.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk {

class Waiter;

struct AllReduceArgs {
  void* buffer = nullptr;  // the result (and the input, in place)
  size_t count = 0;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;  // avg = sum, then scaled by 1/n
  // Out of place: the input, `count` elements that must not overlap `buffer` (null: in place).
  // allReduceList works in place only.
  const void* send = nullptr;
  // `buffer` (in place) lies in a window (Communicator::allocateWindow) at the same offset of
  // the same window on every rank: the communicator may use the window's symmetric kernels.
  // Only with window_call (below), which is what routes the all-reduce.
  bool in_window = false;
  // The all-reduce is one of a call whose ranks agreed on windows (core/step/call_windows.cc),
  // alike on every rank, and `buffer` lies either in_window or in no window on any rank. The
  // communicator runs every all-reduce of such a call where the windows are, so that a step
  // replayed as one CUDA graph meets one communicator: a second in the graph cost 0.17 ms of a
  // 4.7 ms step (the mlp at batch 512, 2 x H200).
  bool window_call = false;
};

struct ReduceArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // significant at root only; may equal send there
  size_t count = 0;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
};

struct BroadcastArgs {
  void* buffer = nullptr;  // root's is sent (in place), every other rank's is overwritten
  size_t count = 0;
  DType dtype = DType::Float32;
  int root = 0;
  // Out of place, significant at the root: what it sends, copied to every rank's `buffer` (the
  // root's too); null: in place.
  const void* send = nullptr;
};

// Variable-length gathers: rank r contributes counts[r] elements (counts is identical on every
// rank); the result is the concatenation in rank order, sum(counts) elements.
struct GatherArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // significant at root only
  std::vector<size_t> counts;
  DType dtype = DType::Float32;
  int root = 0;
};

struct AllGatherArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // must not overlap send
  std::vector<size_t> counts;
  DType dtype = DType::Float32;
};

// The interface every backend's collectives implement. Callers use the public, non-virtual entry
// points: they check what every rank shares once, for every backend (op valid for the dtype, root
// in range, one count per rank), throwing InvalidArgument on every rank before anything moves,
// return at once when there is nothing to move (count 0; gathers: no element anywhere), and only
// then call the backend's do...() with arguments it may trust. Adding a collective: see
// collectives/README.md.
class Communicator {
 public:
  virtual ~Communicator() = default;
  // "shm", "nccl", "host-staged"
  virtual const char* name() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }

  void allReduce(const AllReduceArgs& args, Waiter& waiter);
  // Every buffer of the list all-reduced in one collective (k shared variables: one NCCL group,
  // one barrier pair on shared memory), each with its own count, dtype and op. The same as
  // calling allReduce for each in order, only cheaper.
  void allReduceList(std::span<const AllReduceArgs> list, Waiter& waiter);
  void reduce(const ReduceArgs& args, Waiter& waiter);
  void broadcast(const BroadcastArgs& args, Waiter& waiter);
  void gather(const GatherArgs& args, Waiter& waiter);
  void allGather(const AllGatherArgs& args, Waiter& waiter);

  // Windows: device memory that every rank allocates together and registers with the
  // communicator, so that an all-reduce inside it (AllReduceArgs::in_window) may take symmetric
  // kernels (NCCL 2.27), which leave more of the GPU to the compute running beside them.
  // allocateWindow is collective: every rank calls it at the same point of its step with the
  // same bytes, in the same order. Windows are numbered in that order, so a number means the same
  // window on every rank. A window is the communicator's: the caller hands it to
  // Device::adoptWindow, so release leaves it alone (a rank that lets go of one alone could not
  // deregister it: that is collective too), and its memory goes when the communicator closes.
  // nullptr on every rank alike where some rank could not allocate one. Backends without
  // windows: hasWindows() false.
  virtual bool hasWindows() const { return false; }
  virtual void* allocateWindow(size_t bytes, Waiter& waiter);
  // Memory [begin, begin + bytes): a window, or the part of one a call's update uses.
  struct Window {
    void* begin;
    size_t bytes;
    // Whether [buffer, buffer + n) lies inside.
    bool holds(const void* buffer, size_t n) const;
  };
  // The number of the window that holds [buffer, buffer + bytes), else -1: of those the backend
  // recorded (recordWindow), which its allocateWindow must do on success, or every call would
  // see its update buffers in no window and ask for new ones.
  int64_t windowOf(const void* buffer, size_t bytes) const;
  // Where window `number` (windowOf's) begins.
  void* windowAt(int64_t number) const {
    return recorded_windows_.at(static_cast<size_t>(number)).begin;
  }

 protected:
  Communicator(int rank, int n_ranks) : rank_(rank), size_(n_ranks) {}

  // count > 0, op valid for the dtype.
  virtual void doAllReduce(const AllReduceArgs& args, Waiter& waiter) = 0;
  // At least one entry, every count > 0, every op valid. The default calls doAllReduce for
  // each entry in turn.
  virtual void doAllReduceList(std::span<const AllReduceArgs> list, Waiter& waiter);
  // count > 0, op valid, root a rank.
  virtual void doReduce(const ReduceArgs& args, Waiter& waiter) = 0;
  // count > 0, root a rank.
  virtual void doBroadcast(const BroadcastArgs& args, Waiter& waiter) = 0;
  // offsets[r]: rank r's element offset in the result, offsets[size()] the total (> 0); root a
  // rank; one count per rank.
  virtual void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                        Waiter& waiter) = 0;
  virtual void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                           Waiter& waiter) = 0;

  // A window every rank now holds (allocateWindow's success): numbered in the order recorded,
  // the same on every rank, and found by windowOf. The backend owns its memory: it frees the
  // recorded windows (recordedWindows), then forgetRecordedWindows.
  void recordWindow(void* begin, size_t bytes) { recorded_windows_.push_back({begin, bytes}); }
  const std::vector<Window>& recordedWindows() const { return recorded_windows_; }
  void forgetRecordedWindows() { recorded_windows_.clear(); }

 private:
  void checkRoot(int root, const char* what) const;
  // Fills offsets_ from counts (checked: one per rank); returns the total.
  size_t partOffsets(const std::vector<size_t>& counts, const char* what);

  int rank_;
  int size_;
  std::vector<size_t> offsets_;           // the last gather's offsets, reused across calls
  std::vector<AllReduceArgs> list_;       // the last list's nonzero entries, reused across calls
  std::vector<Window> recorded_windows_;  // recordWindow's, in order
};

}  // namespace synk
