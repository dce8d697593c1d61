#pragma once
// What a test scripts into the NCCL stand-in (faults) and what it reads back (the ledger).
//
// Both live in one anonymous shared mapping that the test process creates before it forks its
// ranks (configure(), or the stand-in factory's checkBeforeFork()): every rank inherits the faults
// and writes its observations where the test process — rank 0, which reads them after the ranks
// are gone — can see them. No name, so nothing to leak in /dev/shm.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace synk::standin {

// Ranks of one stand-in communicator (the shared-memory layout is sized for this many).
inline constexpr int kMaxRanks = 8;

enum class Call : int32_t { None = 0, Init, Split, Finalize, Collective };
const char* callName(Call call);

// One injected fault: the call, the rank it hits (-1: every rank) and, for Call::Collective, which
// collective call of that rank (0 = the first ncclAllReduce/Reduce/Broadcast/AllGather/Send/Recv
// issued since the rank created its communicator).
struct Fault {
  Call call = Call::None;
  int32_t rank = -1;
  int32_t index = 0;
  bool hits(Call c, int r, int i = 0) const {
    return call == c && (rank < 0 || rank == r) && (c != Call::Collective || index == i);
  }
};

struct Faults {
  // Every non-blocking job (init, split, finalize, the enqueue of a collective) runs this long.
  std::chrono::milliseconds job_delay{0};
  // The split's job writes the child's handle only after this (plus job_delay): ncclCommSplit
  // under a non-blocking parent has returned ncclSuccess long before (NCCL 2.28).
  std::chrono::milliseconds split_delay{20};
  // The call answers ncclInProgress (a split under a non-blocking parent: ncclSuccess), then its
  // job fails with ncclSystemError. A collective on a blocking communicator answers ncclSuccess;
  // its operation on the stream then sets the communicator's asynchronous error and stays there,
  // never completing, until the communicator is aborted (a real NCCL kernel whose peer data never
  // comes).
  Fault fail;
  // The rank never arrives: its job or op waits (without taking part) until it is aborted.
  Fault absent;
  // The rank SIGKILLs itself inside that call's job (a collective: inside its op on the stream).
  Fault die;
  // slow_rank's every collective reads its peers' data slow_delay late, so it finishes after
  // them (a missing teardown barrier then shows as a violation).
  int32_t slow_rank = -1;
  std::chrono::milliseconds slow_delay{0};
  // A wait that would hang a real NCCL forever ends after this with ncclSystemError and a
  // violation, so that a broken test fails instead of hanging CI.
  std::chrono::seconds hang_limit{120};
};

// What one rank's stand-in saw (indexed by its rank in the communicator it created).
struct RankRecord {
  std::atomic<int32_t> inits, splits, finalizes, destroys, aborts;
  std::atomic<int32_t> split_returned_while_running;  // ncclCommSplit: ncclSuccess, job running
  std::atomic<int32_t> finalize_in_progress;          // ncclCommFinalize answered ncclInProgress
  std::atomic<int32_t> refused;  // "Attempt to use communicator before the previous operation..."
  std::atomic<int32_t> jobs_stopped_by_abort;
  std::atomic<int32_t> ops_stopped_by_abort;
  // ncclCommWindowRegister calls, collectives whose buffers lie in a window registered on the
  // communicator they were issued on (NCCL would take its symmetric kernels there), and
  // collectives issued on a communicator that holds windows (in one or not).
  std::atomic<int32_t> window_registrations, window_ops, ops_on_window_comms;
  // Written when the rank's stand-in backend is gone: stand-in threads (jobs, stream workers) and
  // communicators still alive then; -1 before.
  std::atomic<int32_t> live_threads_at_exit, live_comms_at_exit;
};

struct Ledger {
  Faults faults;
  RankRecord ranks[kMaxRanks];
  std::atomic<int32_t> violations;
  std::atomic<uint32_t> log_used;
  char log[16384];
};

// Creates the ledger if needed (in the calling process: call before forking) and resets it.
void configure(const Faults& faults);
// The ledger; created with default faults if configure() never ran.
Ledger& ledger();
const Faults& faults();
RankRecord& record(int rank);

// A breach of NCCL's contract by its caller (or an impossible state): counted, and appended to
// the log that tests print.
void recordViolation(const std::string& text);
std::string violationLog();

// Stand-in threads alive in this process (job threads and stream workers).
int liveThreads();
void threadStarted();
void threadEnded();

}  // namespace synk::standin
