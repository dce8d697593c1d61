#include "synk/collectives/cuda/nccl/graph_replay.h"

#include <algorithm>
#include <string>

#include "synk/core/log.h"

namespace synk {

GraphReplay::GraphReplay(NcclDevice& gpu, bool enabled, size_t capacity)
    : gpu_(gpu), enabled_(enabled && capacity > 0), capacity_(capacity) {}

GraphReplay::~GraphReplay() {
  clear();
}

void GraphReplay::clear() noexcept {
  for (Entry& entry : entries_) {
    if (entry.graph != nullptr) gpu_.destroyGraph(entry.graph);
  }
  entries_.clear();
}

void GraphReplay::abandon() noexcept {
  entries_.clear();
  enabled_ = false;
}

void GraphReplay::run(std::span<const uint64_t> key, const std::function<void()>& issue) {
  if (!enabled_) return issue();
  const uint64_t generation = gpu_.memoryGeneration();
  if (generation != generation_) {
    clear();
    generation_ = generation;
  }
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return std::equal(entry.key.begin(), entry.key.end(), key.begin(), key.end());
  });
  if (it == entries_.end()) {  // first sighting: issued as it is, captured if it comes again
    if (entries_.size() >= capacity_) {
      if (entries_.back().graph != nullptr) gpu_.destroyGraph(entries_.back().graph);
      entries_.pop_back();
    }
    entries_.push_front({std::vector<uint64_t>(key.begin(), key.end()), nullptr});
    return issue();
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  if (entry.graph == nullptr) {
    capture(entry, issue);
    if (!enabled_) return issue();  // the capture failed: nothing of it ran
  }
  gpu_.launchGraph(entry.graph);
  ++launches_;
}

void GraphReplay::capture(Entry& entry, const std::function<void()>& issue) {
  std::string why;
  gpu_.beginCapture();
  try {
    issue();
  } catch (...) {
    gpu_.destroyGraph(gpu_.endCapture(why));  // leaves the stream out of capture mode
    throw;
  }
  entry.graph = gpu_.endCapture(why);
  if (entry.graph != nullptr) {
    ++captures_;
    return;
  }
  enabled_ = false;
  clear();
  logWarning("capturing NCCL calls in a CUDA graph failed (", why,
             "); they are issued one by one from now on");
}

}  // namespace synk
