#include "synk/core/waiter.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "synk/core/error.h"

namespace synk {
namespace {
// Transient value of ControlBlock::abort while the winner writes the message.
constexpr uint32_t kAbortWriting = 0xffffffffu;
}  // namespace

void wakeSleepers(ControlBlock& cb) {
  cb.wake_word.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&cb.wake_word), FUTEX_WAKE, INT32_MAX, nullptr,
          nullptr, 0);
}

void futexWait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::nanoseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000000);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

bool abortSession(ControlBlock& cb, AbortReason reason, int rank, const std::string& message) {
  uint32_t expected = 0;
  const bool won = cb.abort.compare_exchange_strong(expected, kAbortWriting);
  if (won) {
    cb.abort_rank = rank;
    storeMessage(cb.abort_message, message);
    cb.abort.store(static_cast<uint32_t>(reason), std::memory_order_release);
  }
  wakeSleepers(cb);
  return won;
}

namespace {
// Waits (at most a second: the winner may have died mid-write) for the abort record to be
// complete. Returns false when it never completed.
bool awaitSettled(ControlBlock& cb) {
  const auto give_up = Clock::now() + std::chrono::seconds(1);
  while (cb.abort.load(std::memory_order_acquire) == kAbortWriting) {
    if (Clock::now() >= give_up) return false;
  }
  return true;
}
}  // namespace

std::string abortMessage(ControlBlock& cb) {
  if (!awaitSettled(cb) || cb.abort_message[0] == '\0') return "the session was aborted";
  return std::string(cb.abort_message, strnlen(cb.abort_message, kMessageBytes));
}

void throwAborted(ControlBlock& cb) {
  const std::string message = abortMessage(cb);
  const uint32_t reason = cb.abort.load(std::memory_order_acquire);
  switch (static_cast<AbortReason>(reason)) {
    case AbortReason::Timeout:
      throw Timeout(message);
    case AbortReason::Shutdown:
      throw UsageError(str("the session was closed: ", message));
    default:  // Fatal, or a record whose writer died before finishing it
      throw PeerFailure(cb.abort_rank, message);
  }
}

Waiter::Waiter(ControlBlock& cb, Liveness* liveness, Clock::time_point deadline, std::string what)
    : cb_(cb),
      liveness_(liveness),
      deadline_(deadline),
      next_probe_(Clock::now()),
      what_(std::move(what)) {}

void Waiter::rearm(Clock::time_point deadline, const std::string& what) {
  deadline_ = deadline;
  next_probe_ = Clock::now();  // as a new waiter: the first check probes the peers
  what_ = what;
}

void Waiter::check() {
  if (cb_.abort.load(std::memory_order_acquire) != 0) throwAborted(cb_);
  if (liveness_) {
    const auto now = Clock::now();
    if (now >= next_probe_) {
      next_probe_ = now + kProbeInterval;
      liveness_->check();
    }
  }
}

}  // namespace synk
