#pragma once
// Runs a test body on n ranks of a real ProcessGroup (gloo's MultiProcTest): the test process is
// the master and rank 0, the other ranks are forked workers, and every rank builds its ShmHeap
// and Backend exactly as a session does. Bodies report failure by throwing an ordinary exception
// with a message (never a Catch2 assertion: workers are not the Catch2 process); the master then
// shows every failing rank's message. Every wait has a deadline, worker exit codes are checked
// and the session's shared memory must be gone afterwards.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "synk/core/backend.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"

namespace synk::test {

struct RankContext {
  ProcessGroup& group;
  ShmHeap& heap;
  Backend& backend;

  int rank() const { return group.rank(); }
  int size() const { return group.size(); }
  Device& device() const { return backend.device(); }
  // A waiter with the fixture's deadline, starting now.
  Waiter waiter(std::string what) const { return group.commandWaiter(std::move(what)); }
};

using RankBody = std::function<void(RankContext&)>;

struct RankOptions {
  // Deadline of every wait: inside bodies (RankContext::waiter), at the final barrier, and for
  // the workers' exit.
  std::chrono::milliseconds timeout{30000};
  // Deadline of the start (the backend's creation: NCCL's communicators).
  std::chrono::milliseconds startup_timeout{30000};
  std::chrono::microseconds spin{200};
  // Device of each rank for device backends; empty = rank r on device r. Ranks may share one
  // ({0, 0}: two ranks on one GPU, host-staged collectives only).
  std::vector<int> devices{};
};

struct RankOutcome {
  std::string failure;  // empty: the body returned and the final barrier passed
  std::string exit;     // workers: how the process ended ("exited with code 0", ...)
  bool exited_ok = true;
  bool ok() const { return failure.empty() && exited_ok; }
};

struct RankRun {
  std::vector<RankOutcome> ranks;
  std::string shm_prefix;
  int leftover_segments = 0;  // /dev/shm entries with the session prefix after shutdown
  bool allOk() const;
  std::string describe() const;
};

// Runs `body` on every rank and reports what happened, asserting nothing (fault tests inspect
// the outcome). Skips the test if the backend cannot run n_ranks here.
RankRun launchRanks(BackendFactory& factory, int n_ranks, const RankBody& body,
                    const RankOptions& options = {});

// launchRanks, then REQUIREs that every rank succeeded and exited with code 0 and that no shared
// memory is left; the failure message lists each rank's outcome.
void runOnRanks(BackendFactory& factory, int n_ranks, const RankBody& body,
                const RankOptions& options = {});

// Ends the test as skipped (CTest SKIP_RETURN_CODE), printing why.
[[noreturn]] void skipTest(const std::string& reason);

}  // namespace synk::test
