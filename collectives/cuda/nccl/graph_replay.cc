#include "synk/collectives/cuda/nccl/graph_replay.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "synk/core/error.h"
#include "synk/core/log.h"

namespace synk {

GraphReplay::GraphReplay(NcclDevice& gpu, bool enabled, size_t capacity)
    : gpu_(gpu), enabled_(enabled && capacity > 0), capacity_(capacity) {}

GraphReplay::~GraphReplay() {
  clear();
}

void GraphReplay::drop(Entry& entry) noexcept {
  if (entry.graph != nullptr) gpu_.destroyGraph(entry.graph);
  entry.graph = nullptr;
}

void GraphReplay::clear() noexcept {
  for (Entry& entry : entries_)
    drop(entry);
  entries_.clear();
}

void GraphReplay::abandon() noexcept {
  entries_.clear();
  enabled_ = false;
}

GraphReplay::Entry& GraphReplay::remember(std::span<const uint64_t> key) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return std::equal(entry.key.begin(), entry.key.end(), key.begin(), key.end());
  });
  if (it != entries_.end()) {
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front();
  }
  if (entries_.size() >= capacity_) {
    drop(entries_.back());
    entries_.pop_back();
  }
  entries_.push_front({std::vector<uint64_t>(key.begin(), key.end()), nullptr});
  return entries_.front();
}

void GraphReplay::run(std::span<const uint64_t> key, const Agree& agree,
                      const std::function<void()>& issue) {
  if (!enabled_) return issue();
  const uint64_t generation = gpu_.memoryGeneration();
  if (generation != generation_) {  // this rank's graphs may hold freed addresses
    if (!entries_.empty()) ++memory_clears_;
    clear();
    generation_ = generation;
  }
  const auto seen = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& entry) {
    return std::equal(entry.key.begin(), entry.key.end(), key.begin(), key.end());
  });
  Proposal mine{kIssue, 0};
  if (seen != entries_.end()) mine = {seen->graph ? kLaunch : kCapture, seen->capture};
  using Clock = std::chrono::steady_clock;
  const auto agree_start = Clock::now();
  const Agreed all = agree(mine);
  agree_ns_ += std::chrono::nanoseconds(Clock::now() - agree_start).count();
  Entry& entry = remember(key);
  if (all.level == kIssue) {
    drop(entry);  // another rank has none: from "seen" on, alike
    ++issued_;
    return issue();
  }
  if (all.level == kCapture || !all.same_capture) {
    drop(entry);
    std::string why;
    bool began = true;
    try {
      gpu_.beginCapture();
    } catch (const std::exception& e) {
      began = false;  // a failed capture, agreed below
      why = e.what();
    }
    if (began) {
      try {
        issue();
      } catch (...) {
        gpu_.destroyGraph(gpu_.endCapture(why));  // leaves the stream out of capture mode
        throw;
      }
      entry.graph = gpu_.endCapture(why);
    }
    const uint32_t number = next_capture_++;
    if (agree({entry.graph != nullptr ? kCapture : kIssue, number}).level == kIssue) {
      enabled_ = false;  // one capture failed: nobody replays
      clear();
      logWarning("capturing NCCL calls in a CUDA graph failed on ",
                 why.empty() ? "another rank" : "this rank (" + why + ")",
                 "; they are issued one by one from now on");
      ++issued_;
      return issue();  // nothing captured ran
    }
    entry.capture = number;
    ++captures_;
  }
  const auto launch_start = Clock::now();
  gpu_.launchGraph(entry.graph);
  launch_ns_ += std::chrono::nanoseconds(Clock::now() - launch_start).count();
  ++launches_;
}

std::string GraphReplay::summary() const {
  const int calls = launches_ + issued_;
  return str(launches_, " launched, ", captures_, " captured, ", issued_,
             " issued, graphs dropped ", memory_clears_,
             " times as memory was freed; agreeing took ",
             calls > 0 ? double(agree_ns_) / calls * 1e-3 : 0.0, " us a call, launching ",
             launches_ > 0 ? double(launch_ns_) / launches_ * 1e-3 : 0.0, " us a launch");
}

}  // namespace synk
