#pragma once
// Every blocking wait in synk goes through a Waiter: it knows the deadline, notices an aborted
// session and asks a Liveness probe whether the peers are still alive.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "synk/core/control_block.h"

namespace synk {

using Clock = std::chrono::steady_clock;

// How a waiting process notices that a peer is gone: the master reaps its children, a worker
// checks its parent. check() throws PeerFailure (after aborting the session) when one is gone.
class Liveness {
 public:
  virtual ~Liveness() = default;
  virtual void check() = 0;
};

// Marks the session aborted (first caller wins), records why, and wakes every sleeper.
// Returns true if this call set the reason.
bool abortSession(ControlBlock& cb, AbortReason reason, int rank, const std::string& message);
// Throws the exception matching an abort already recorded in cb (PeerFailure or Timeout).
[[noreturn]] void throwAborted(ControlBlock& cb);
// Why the session was aborted (bounded wait for a reason being written).
std::string abortMessage(ControlBlock& cb);
void wakeSleepers(ControlBlock& cb);
// Sleeps while `word` holds `expected`, for at most `timeout` (or until wakeSleepers on its
// control block): core's barrier and cluster's node bridge both sleep on the wake word so.
void futexWait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::nanoseconds timeout);

class Waiter {
 public:
  // `what` describes the wait for messages ("start of command 'call f'").
  Waiter(ControlBlock& cb, Liveness* liveness, Clock::time_point deadline, std::string what);
  static Clock::time_point never() { return Clock::time_point::max(); }

  // Throws if the session is aborted or a peer died. Cheap: probes liveness at most every
  // kProbeInterval.
  void check();
  // Ready for the next wait: a new deadline and description, copied into the old one's storage
  // (a step's waiter is re-armed every step without allocating once grown).
  void rearm(Clock::time_point deadline, const std::string& what);
  Clock::time_point deadline() const { return deadline_; }
  const std::string& what() const { return what_; }
  ControlBlock& control() const { return cb_; }

  static constexpr std::chrono::microseconds kProbeInterval{1000};

 private:
  ControlBlock& cb_;
  Liveness* liveness_;
  Clock::time_point deadline_;
  Clock::time_point next_probe_;
  std::string what_;
};

}  // namespace synk
