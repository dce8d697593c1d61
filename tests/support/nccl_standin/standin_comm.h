#pragma once
// One stand-in communicator (what an ncclComm_t points to) and the job machinery of NCCL's
// non-blocking mode.
//
// NCCL 2.28 (src/group.cc, ncclGroupEndInternal): a call on a non-blocking communicator launches
// its work as a job on a new thread, sets the communicator's state to ncclInProgress and returns;
// the job's result becomes the state (ncclCommGetAsyncError) when it ends; reading a state that
// left ncclInProgress joins the job (src/init.cc, ncclCommGetAsyncError → ncclGroupJobComplete).
// Every other call first checks the state (ncclCommEnsureReady) and is refused with
// ncclInvalidArgument while it is ncclInProgress. A blocking communicator does the same work
// inline. Comm models exactly that: one job at a time, its state, its abort flag.
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/nccl_standin/standin_segment.h"

namespace synk::standin {

class Comm {
 public:
  Comm(bool blocking, int rank, int size, int world_rank)
      : blocking(blocking), rank(rank), size(size), world_rank(world_rank) {}
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  ncclComm_t handle() { return reinterpret_cast<ncclComm_t>(this); }

  // Runs `body` as this communicator's job (non-blocking) or inline (blocking); returns what
  // the call returns: ncclInProgress, or the body's result.
  ncclResult_t run(std::function<ncclResult_t()> body);
  // ncclCommGetAsyncError: the state; joins a job that has ended.
  ncclResult_t state();
  // ncclCommEnsureReady: ncclSuccess, the state's error, or ncclInvalidArgument (refused) while
  // a job runs. `record` stores the refusal as the state, as NCCL's enqueue and finalize do.
  ncclResult_t ensureReady(bool record);
  bool jobRunning() const { return !job_finished_.load(); }
  // ncclCommSetAsyncError: an operation on the stream failed.
  void setAsyncError(ncclResult_t result) { state_.store(result); }
  // Sets the abort flag, wakes every waiter and joins the job (it ends at its next look).
  void abort();
  bool aborted() const { return aborted_.load(); }
  // Sleeps `delay` in steps, false (early) if aborted.
  bool pause(std::chrono::milliseconds delay) const;
  // Waits on the segment with this communicator's abort flag as the stop condition.
  template <typename Ready>
  WaitEnd waitFor(Ready&& ready) {
    return segment->waitFor(std::forward<Ready>(ready), [this] { return aborted(); });
  }
  Context& context() { return segment->context(context_index); }
  RankLine& line(int r) { return context().lines[r]; }
  // Records a violation if a peer still has an unfinished operation on this communicator
  // (`what` tears it down: finalize, destroy or abort).
  void checkTeardown(const char* what);

  const bool blocking;
  const int rank;
  const int size;
  const int world_rank;              // rank in the communicator init created (the ledger's index)
  std::shared_ptr<Segment> segment;  // null until init's job has attached
  int context_index = 0;
  std::atomic<bool> finalized{false};
  uint64_t step = 0;  // collective steps taken (touched only by the stream worker)
  // Touched only by this communicator's jobs (one at a time).
  uint64_t split_seq = 0;
  // Windows registered on it ([address, address + bytes)); touched only by the calling thread.
  std::vector<std::pair<uintptr_t, size_t>> windows;
  // Whether [pointer, pointer + bytes) lies in one of `windows`.
  bool inWindow(const void* pointer, size_t bytes) const;
  // The index in `windows` of the one that holds [pointer, pointer + bytes), and the offset
  // there; -1 if none.
  int32_t windowAt(const void* pointer, size_t bytes, uint64_t* offset) const;

 private:
  void joinFinished();

  std::atomic<ncclResult_t> state_{ncclSuccess};
  std::atomic<bool> aborted_{false};
  std::mutex job_mutex_;
  std::thread job_;
  std::atomic<bool> job_finished_{true};
};

// Live communicators of this process, by handle (NCCL frees a communicator at destroy and abort;
// here a freed handle is recognised, reported as a violation and refused).
void registerComm(const std::shared_ptr<Comm>& comm);
std::shared_ptr<Comm> findComm(ncclComm_t handle);
void unregisterComm(Comm* comm);
int liveComms();

// ncclGetLastError's text (process-wide, as in NCCL: src/debug.cc ncclLastError).
void setLastError(const std::string& text);
const char* lastError();

}  // namespace synk::standin
