#pragma once
// The control plane: one anonymous shared mapping created by the master before fork and
// inherited by every worker. It holds the barrier words, the command the master is issuing, and
// one slot per rank for its status, error message and small per-barrier exchanges (shapes,
// fingerprints, buffer locations). Large arguments travel in shared-memory blobs instead.
//
// Every field written by one process and read by another is ordered by a barrier (core/barrier.h):
// the writer stores before arriving, readers load after passing. Fields that are rewritten at
// every barrier are double-buffered by barrier-epoch parity, so a fast rank writing for the next
// barrier never clobbers what a slow rank is still reading from the last one.
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "synk/core/phase_clock.h"

namespace synk {

inline constexpr int kMaxRanks = 64;
inline constexpr size_t kMessageBytes = 4096;
inline constexpr size_t kExchangeBytes = 32 * 1024;
inline constexpr size_t kCommandBytes = 64 * 1024;

// Copies `message` into a kMessageBytes field of the control block, cut to fit, NUL-terminated.
inline void storeMessage(char (&field)[kMessageBytes], std::string_view message) {
  const size_t n = message.size() < kMessageBytes ? message.size() : kMessageBytes - 1;
  std::memcpy(field, message.data(), n);
  field[n] = '\0';
}

// Why the session was aborted (ControlBlock::abort).
enum class AbortReason : uint32_t { None = 0, PeerDied, Timeout, Fatal, Shutdown };

struct alignas(64) RankSlot {
  // Barrier epoch this rank has reached. Alone on its cache line: it is what peers spin on.
  std::atomic<uint64_t> arrived;
  char pad_[56];
  // Per-barrier flags, indexed by epoch parity: whether the rank's work since the last barrier
  // succeeded, and which barrier site it arrived at (a mismatch means ranks diverged).
  uint32_t ok[2];
  uint32_t site[2];
  std::atomic<int32_t> pid;
  // Set when the rank missed a deadline: it is known not to arrive, so shutdown ends it at once
  // instead of granting it the grace the other ranks get to leave.
  std::atomic<uint32_t> late;
  // Barrier epoch of the last CommandStart this rank passed: a rank found dead during a step whose
  // start it never passed (it was waiting, idle, for the command) died between steps.
  std::atomic<uint64_t> started;
  // Result of the current command: 0 = ok, else the ErrorKind of core/step/command.h.
  int32_t status;
  // How often this rank's variable shapes have changed, written with every step's status: the
  // master skips a collective's shape exchange while no rank's count moved
  // (session/master/collective_master.h).
  uint64_t shape_generation;
  char message[kMessageBytes];
  // The last step's phase times (ForkOptions::step_times: core/phase_clock.h), written after its
  // CommandEnd; times_epoch, that step's CommandStart epoch, is stored last (release).
  StepTimes times;
  std::atomic<uint64_t> times_epoch;
  // How many leading bytes of each exchange area this rank filled for the barrier of that
  // parity (Barrier::outbox): what a node's bridge ships to the other nodes (cluster/).
  uint32_t exchange_bytes[2];
  // Small payloads published at a barrier, indexed by epoch parity.
  alignas(64) std::byte exchange[2][kExchangeBytes];
};

struct ControlBlock {
  int32_t n_ranks;
  int32_t ranks_per_node;  // over several nodes (node-major ranks); 0 on one node
  int32_t master_rank;
  pid_t master_pid;
  // Set once, by whoever first sees a failure; every wait checks it.
  std::atomic<uint32_t> abort;
  int32_t abort_rank;
  char abort_message[kMessageBytes];
  // Futex word bumped whenever sleepers may need to re-check (a barrier arrival, an abort).
  alignas(64) std::atomic<uint32_t> wake_word;
  std::atomic<int32_t> sleepers;
  // The command being executed, written by the master before the start barrier, in the half
  // indexed by that barrier's epoch parity: a posted step (core/step/step_runner.h) returns before
  // the workers are done with its command, so the next command goes to the other half.
  alignas(64) uint32_t opcode[2];
  // The leading bytes of payload[half] the command uses (what a node's bridge ships).
  uint32_t payload_bytes[2];
  std::byte payload[2][kCommandBytes];
  // n_ranks slots follow (flexible array).
  alignas(64) RankSlot ranks[1];

  static size_t bytesFor(int n_ranks) {
    return sizeof(ControlBlock) + (static_cast<size_t>(n_ranks) - 1) * sizeof(RankSlot);
  }
  RankSlot& slot(int rank) { return ranks[rank]; }
};

}  // namespace synk
