#pragma once
// Replays a repeated NCCL call as a CUDA graph. On 2 x H200 enqueueing one small ncclAllReduce
// costs the host ~9-12 us, more than the GPU's ~6 us for it, so a loop of small all_reduces is
// bound by the host; a graph of the same call launches in 1.2-2.4 us less (128 KiB, 8 B:
// results/device/2026-11-27-h200x2-nccl-graph-probe-80cd153.md).
//
// The price: once a call was captured on a communicator, NCCL orders every call issued on it
// after the graphs (NCCL_GRAPH_MIXING_SUPPORT, on by default: an event record and wait per
// call), which cost an issued small all_reduce up to ~2.8 us more host time a call on the same
// machine (noisy: 0-2.8). Only calls bound by the host notice; the replayed ones gain more.
//
// Every rank must treat a call alike: issued on all, or launched from a graph on all (NCCL may
// tune a captured call differently, so a mix can hang or corrupt). What each rank knows is its
// own: its key holds its own addresses, and its graphs go when its own device releases memory.
// So every call agrees first (`agree`: the least of what the ranks propose, and whether their
// graphs come from the same capture) on what they all can do:
//   - some rank never saw the call (or dropped its graphs): every rank issues it, and notes it
//     as seen (dropping a graph it had);
//   - every rank saw it, some have no graph: every rank captures it (recorded, not run), then
//     they agree that every capture became a graph and launch; if one did not, every rank drops
//     its graph, issues the call and turns replay off for good (a warning says why);
//   - every rank has a graph, captured at the same capture (captures are numbered, and agreed,
//     so the numbers match across ranks): every rank launches it; graphs from different
//     captures (a rank that used one buffer for two calls another rank kept apart) are captured
//     again, by every rank.
// A failure to start a capture counts as a failed capture. An error `issue` throws while
// capturing ends the capture and reaches the caller (inside a collective it aborts the session).
// A graph holds raw addresses and counts, so the key must name every address and count `issue`
// uses, and a rank's graphs all go when its device releases memory (memoryGeneration()): an
// address freed and handed out again may belong to another buffer. The `capacity` most recently
// used keys are kept.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <string>
#include <vector>

#include "synk/collectives/cuda/nccl/nccl_device.h"

namespace synk {

class GraphReplay {
 public:
  static constexpr size_t kCapacity = 8;
  // What a rank proposes for a call; ranks agree on the least.
  enum Level : int32_t { kIssue = 0, kCapture = 1, kLaunch = 2 };
  struct Proposal {
    int32_t level;
    uint32_t capture;  // kLaunch: the number of the capture its graph came from
  };
  struct Agreed {
    int32_t level;      // the least proposed
    bool same_capture;  // every rank proposed the same capture number
  };
  // Every rank's proposal in, what they agree on out (a collective: every rank calls it).
  using Agree = std::function<Agreed(Proposal mine)>;
  // One rank: its proposal is the agreement.
  static Agreed alone(Proposal mine) { return {mine.level, true}; }

  GraphReplay(NcclDevice& gpu, bool enabled, size_t capacity = kCapacity);
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  // `issue` enqueues work on the device's stream and nothing else (no waits, no allocations).
  // Every rank calls run() for the same calls in the same order, with `enabled` alike.
  void run(std::span<const uint64_t> key, const Agree& agree, const std::function<void()>& issue);
  // Destroys every graph; never waits (a launch still running finishes, then its graph is
  // freed). Before an abort too: NCCL's abort waits for the graphs that used the communicator.
  void clear() noexcept;
  // The CUDA runtime is gone (process exit): forgets the graphs without calling CUDA.
  void abandon() noexcept;

  bool enabled() const { return enabled_; }
  int captures() const { return captures_; }
  int launches() const { return launches_; }
  int issued() const { return issued_; }  // replayable calls issued one by one (agreed so)
  int memoryClears() const { return memory_clears_; }  // graphs dropped: the device freed memory
  // "N launched, N captured, N issued, graphs dropped N times as memory was freed; agreeing took
  // X us a call, launching Y us a launch": what a rank did with its replayable calls and where
  // its host time went (logged at info level when the communicator closes).
  std::string summary() const;

 private:
  struct Entry {
    std::vector<uint64_t> key;
    NcclDevice::Graph graph = nullptr;  // null: seen, not captured
    uint32_t capture = 0;               // the number of the capture `graph` came from
  };
  Entry& remember(std::span<const uint64_t> key);  // the entry, moved (or added) to the front
  void drop(Entry& entry) noexcept;                // its graph, if any

  NcclDevice& gpu_;
  bool enabled_;
  size_t capacity_;
  uint64_t generation_ = 0;
  std::list<Entry> entries_;   // most recently used first
  uint32_t next_capture_ = 0;  // every rank numbers its captures alike: they are agreed
  int captures_ = 0;
  int launches_ = 0;
  int issued_ = 0;
  int memory_clears_ = 0;
  int64_t agree_ns_ = 0;   // host time in the first agreement of each call (waiting for peers)
  int64_t launch_ns_ = 0;  // host time in cudaGraphLaunch
};

}  // namespace synk
