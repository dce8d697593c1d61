#include "tests/support/nccl_standin/standin_comm.h"

#include <cstring>
#include <map>

#include "synk/core/error.h"

namespace synk::standin {
namespace {

std::mutex g_comms_mutex;
std::map<const Comm*, std::shared_ptr<Comm>>& comms() {
  static auto* live = new std::map<const Comm*, std::shared_ptr<Comm>>();
  return *live;
}

std::mutex g_error_mutex;
char g_last_error[1024] = "";

}  // namespace

bool Comm::inWindow(const void* pointer, size_t bytes) const {
  uint64_t offset = 0;
  return windowAt(pointer, bytes, &offset) >= 0;
}

int32_t Comm::windowAt(const void* pointer, size_t bytes, uint64_t* offset) const {
  const auto at = reinterpret_cast<uintptr_t>(pointer);
  for (size_t i = 0; i < windows.size(); ++i) {
    const auto& [begin, size] = windows[i];
    if (at >= begin && at + bytes <= begin + size) {
      *offset = at - begin;
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

Comm::~Comm() {
  abort();  // joins a job still running (nothing may write a slot after the handle is gone)
}

ncclResult_t Comm::run(std::function<ncclResult_t()> body) {
  if (blocking) {
    const ncclResult_t result = body();
    state_.store(result);
    return result;
  }
  std::lock_guard<std::mutex> lock(job_mutex_);
  if (job_.joinable()) job_.join();  // ended (the state said so): its result is already the state
  state_.store(ncclInProgress);
  job_finished_.store(false);
  threadStarted();
  job_ = std::thread([this, body = std::move(body)] {
    const ncclResult_t result = body();
    if (aborted()) record(world_rank).jobs_stopped_by_abort.fetch_add(1);
    state_.store(result);
    job_finished_.store(true);
    threadEnded();
  });
  return ncclInProgress;
}

void Comm::joinFinished() {
  if (!job_finished_.load()) return;
  std::lock_guard<std::mutex> lock(job_mutex_);
  if (job_.joinable()) job_.join();
}

ncclResult_t Comm::state() {
  const ncclResult_t now = state_.load();
  if (now != ncclInProgress) joinFinished();
  return now;
}

ncclResult_t Comm::ensureReady(bool record_refusal) {
  const ncclResult_t now = state();
  if (now != ncclInProgress) return now;  // "if ret is not ncclInProgress, we just keep it"
  setLastError("Attempt to use communicator before the previous operation returned ncclSuccess");
  record(world_rank).refused.fetch_add(1);
  // NCCL's enqueue and finalize store the refusal as the state (ncclCommSetAsyncError on their
  // fail path); the running job overwrites it with its own result when it ends.
  if (record_refusal && !blocking) state_.store(ncclInvalidArgument);
  return ncclInvalidArgument;
}

void Comm::abort() {
  aborted_.store(true);
  std::lock_guard<std::mutex> lock(job_mutex_);
  // The job sees the flag within a millisecond (every wait of the stand-in is sliced).
  if (job_.joinable()) job_.join();
  // Only now: the job is the one that sets `segment`. Wakes this rank's operations at once.
  if (segment) segment->wake();
}

bool Comm::pause(std::chrono::milliseconds delay) const {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until) {
    if (aborted()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return !aborted();
}

void Comm::checkTeardown(const char* what) {
  if (!segment) return;
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    const uint64_t queued = line(p).ops_enqueued.load();
    const uint64_t finished = line(p).ops_finished.load();
    if (finished < queued) {
      recordViolation(str("rank ", rank, " called ", what, " on communicator ", context_index,
                          " while rank ", p, " still had ", queued - finished,
                          " unfinished operation(s) on it (no teardown barrier?)"));
    }
  }
}

void registerComm(const std::shared_ptr<Comm>& comm) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  comms()[comm.get()] = comm;
}

std::shared_ptr<Comm> findComm(ncclComm_t handle) {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  const auto it = comms().find(reinterpret_cast<const Comm*>(handle));
  return it == comms().end() ? nullptr : it->second;
}

void unregisterComm(Comm* comm) {
  std::shared_ptr<Comm> last;  // released outside the lock: its destructor may join a job
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  const auto it = comms().find(comm);
  if (it == comms().end()) return;
  last = std::move(it->second);
  comms().erase(it);
}

int liveComms() {
  std::lock_guard<std::mutex> lock(g_comms_mutex);
  return static_cast<int>(comms().size());
}

void setLastError(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  const size_t n = std::min(text.size(), sizeof(g_last_error) - 1);
  std::memcpy(g_last_error, text.data(), n);
  g_last_error[n] = '\0';
}

const char* lastError() {
  return g_last_error;
}

}  // namespace synk::standin
