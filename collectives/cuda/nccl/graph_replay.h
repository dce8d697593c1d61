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
// run(key, issue): the first time a key is seen `issue` runs as it is; the second time it is
// captured into a graph (recorded, not run) and the graph is launched; after that the graph is
// launched. Every rank makes the same calls in the same order (handlers are SPMD), so every rank
// captures the same call at the same step, as NCCL requires of captured collectives.
//
// A graph holds raw addresses and counts, so the key must name every address and count `issue`
// uses, and every graph goes whenever device memory is released (the device's
// memoryGeneration() moved): an address freed and handed out again may belong to another
// buffer, with NCCL's registrations of the old one. The `capacity` most recently used keys are
// kept. A capture that cannot be made a graph turns replay off for good (a warning says why):
// the calls are then issued one by one, as before.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <vector>

#include "synk/collectives/cuda/nccl/nccl_device.h"

namespace synk {

class GraphReplay {
 public:
  static constexpr size_t kCapacity = 8;

  GraphReplay(NcclDevice& gpu, bool enabled, size_t capacity = kCapacity);
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  // `issue` enqueues work on the device's stream and nothing else (no waits, no allocations).
  void run(std::span<const uint64_t> key, const std::function<void()>& issue);
  // Destroys every graph (a graph launched and still running finishes first).
  void clear() noexcept;
  // After an abort: forgets the graphs without calling CUDA, and replays nothing more.
  void abandon() noexcept;

  bool enabled() const { return enabled_; }
  int captures() const { return captures_; }
  int launches() const { return launches_; }

 private:
  struct Entry {
    std::vector<uint64_t> key;
    NcclDevice::Graph graph = nullptr;  // null: seen once, not captured yet
  };
  void capture(Entry& entry, const std::function<void()>& issue);

  NcclDevice& gpu_;
  bool enabled_;
  size_t capacity_;
  uint64_t generation_ = 0;
  std::list<Entry> entries_;  // most recently used first
  int captures_ = 0;
  int launches_ = 0;
};

}  // namespace synk
