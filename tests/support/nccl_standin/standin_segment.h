#pragma once
// The stand-in's "network": one shared-memory segment per ncclUniqueId, through which the ranks
// of a communicator (each its own forked process) meet at init and split, and move collective
// data. ncclGetUniqueId creates it and writes its name into the id; every rank maps it at init.
// The name is removed as soon as it can no longer be needed — when the last rank of the
// communicator has mapped it, or when the first rank lets go of it (an abort before everybody
// arrived ends the rendezvous for good) — and the process that created it removes it at its end
// if nobody ever came (removeCreatedIds()). So no /dev/shm entry outlives a test.
//
// Layout: a header and kMaxContexts contexts; context 0 is the communicator made by init, each
// split takes the next. A context holds one cache line per rank (its progress counters), one
// data slot per rank (collectives move data through it in chunks of kSlotBytes) and one mailbox
// per ordered pair of ranks (send/recv).
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "synk/core/shm_segment.h"
#include "tests/support/nccl_standin/standin_faults.h"

namespace synk::standin {

inline constexpr int kMaxContexts = 4;
inline constexpr size_t kSlotBytes = size_t{128} << 10;
inline constexpr size_t kMailBytes = size_t{16} << 10;

// What a rank announces it is doing at a collective step; every rank must announce the same.
struct OpDesc {
  uint32_t kind;
  uint32_t dtype;
  uint32_t redop;
  int32_t root;
  uint64_t count;
  int32_t window;  // Op::window
  uint64_t window_offset;
  bool operator==(const OpDesc&) const = default;
};

struct alignas(64) RankLine {
  std::atomic<uint32_t> joined;        // init: this rank has arrived
  std::atomic<uint64_t> arrived;       // collective step whose data is in this rank's slot
  std::atomic<uint64_t> done;          // collective step this rank has finished reading
  std::atomic<uint64_t> ops_enqueued;  // operations queued on this rank's stream (teardown check)
  std::atomic<uint64_t> ops_finished;
  std::atomic<uint64_t> split_arrived;  // split rendezvous: sequence number reached
  std::atomic<uint64_t> split_done;
  int32_t color;
  int32_t key;
  OpDesc desc;
};

struct alignas(64) Mailbox {
  std::atomic<uint64_t> written;  // chunks written by the sender
  std::atomic<uint64_t> read;     // chunks taken by the receiver
  uint64_t chunk_bytes;
  uint64_t message_bytes;  // the whole message, written with its first chunk
  alignas(64) std::byte data[kMailBytes];
};

struct Context {
  std::atomic<int32_t> size;
  std::atomic<uint64_t> split_published;  // split sequence whose child context is published
  std::atomic<int32_t> split_child;       // that context, or -1: no context left
  RankLine lines[kMaxRanks];
  std::byte slots[kMaxRanks][kSlotBytes];
  Mailbox mail[kMaxRanks][kMaxRanks];  // [sender][receiver]
};

struct Layout {
  char magic[16];
  std::atomic<int32_t> n_ranks;
  std::atomic<int32_t> attached;
  std::atomic<int32_t> next_context;
  std::atomic<uint32_t> wake;  // futex word: bumped by every publish
  Context contexts[kMaxContexts];
};

enum class WaitEnd { Ready, Stopped, HangLimit };

class Segment {
 public:
  // ncclGetUniqueId: creates a segment and writes its name into `id`.
  static void create(ncclUniqueId* id);
  // Maps the segment of `id` for `rank` of `n_ranks`; null with `error` set when it cannot.
  static std::shared_ptr<Segment> attach(const ncclUniqueId& id, int n_ranks, std::string* error);
  // Removes every segment this process created (idempotent; called at the backend's end).
  static void removeCreatedIds();
  // The prefix of every segment name created by process `pid` (leak checks).
  static std::string namePrefix(int pid);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  Layout& layout() { return *static_cast<Layout*>(mapping_.data()); }
  Context& context(int index) { return layout().contexts[index]; }
  // Wakes every waiter of this segment, in every process (after publishing something).
  void wake();
  // Waits until ready() (true: Ready) or stop() (Stopped), or the hang limit (HangLimit).
  template <typename Ready, typename Stop>
  WaitEnd waitFor(Ready&& ready, Stop&& stop);

 private:
  explicit Segment(ShmSegment mapping) : mapping_(std::move(mapping)) {}
  void sleep(uint32_t seen);

  ShmSegment mapping_;
};

template <typename Ready, typename Stop>
WaitEnd Segment::waitFor(Ready&& ready, Stop&& stop) {
  const auto limit = std::chrono::steady_clock::now() + faults().hang_limit;
  for (int round = 0;; ++round) {
    // Read the word before the condition: a publish in between changes it, so sleep() returns.
    const uint32_t seen = layout().wake.load(std::memory_order_acquire);
    if (ready()) return WaitEnd::Ready;
    if (stop()) return WaitEnd::Stopped;
    if (round % 64 == 63 && std::chrono::steady_clock::now() > limit) return WaitEnd::HangLimit;
    sleep(seen);
  }
}

}  // namespace synk::standin
