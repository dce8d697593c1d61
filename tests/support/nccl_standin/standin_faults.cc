#include "tests/support/nccl_standin/standin_faults.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "synk/core/shm_segment.h"

namespace synk::standin {
namespace {

Ledger* g_ledger = nullptr;
std::atomic<int> g_live_threads{0};

// Kept for the life of the process: forked ranks inherit the mapping, and the test process reads
// it after they are gone.
Ledger* createLedger() {
  static SharedMapping* mapping = new SharedMapping(sizeof(Ledger));
  return new (mapping->data()) Ledger();
}

void reset(Ledger& l, const Faults& f) {
  l.faults = f;
  for (RankRecord& r : l.ranks) {
    for (auto* counter : {&r.inits, &r.splits, &r.finalizes, &r.destroys, &r.aborts,
                          &r.split_returned_while_running, &r.finalize_in_progress, &r.refused,
                          &r.jobs_stopped_by_abort, &r.ops_stopped_by_abort,
                          &r.window_registrations, &r.window_ops, &r.ops_on_window_comms}) {
      counter->store(0);
    }
    r.live_threads_at_exit.store(-1);
    r.live_comms_at_exit.store(-1);
  }
  l.violations.store(0);
  l.log_used.store(0);
  l.log[0] = '\0';
}

}  // namespace

const char* callName(Call call) {
  switch (call) {
    case Call::None:
      return "none";
    case Call::Init:
      return "ncclCommInitRankConfig";
    case Call::Split:
      return "ncclCommSplit";
    case Call::Finalize:
      return "ncclCommFinalize";
    case Call::Collective:
      return "a collective";
  }
  return "?";
}

void configure(const Faults& faults) {
  if (g_ledger == nullptr) g_ledger = createLedger();
  reset(*g_ledger, faults);
}

Ledger& ledger() {
  if (g_ledger == nullptr) configure(Faults{});
  return *g_ledger;
}

const Faults& faults() {
  return ledger().faults;
}

RankRecord& record(int rank) {
  return ledger().ranks[std::clamp(rank, 0, kMaxRanks - 1)];
}

void recordViolation(const std::string& text) {
  Ledger& l = ledger();
  l.violations.fetch_add(1);
  std::fprintf(stderr, "nccl-standin: VIOLATION: %s\n", text.c_str());
  // Reserve a range of the log, then fill it: concurrent writers from several ranks never
  // overlap, and a full log keeps its first entries.
  const std::string line = text + "\n";
  const uint32_t start = l.log_used.fetch_add(static_cast<uint32_t>(line.size()));
  if (start + line.size() < sizeof(l.log)) std::memcpy(l.log + start, line.data(), line.size());
}

std::string violationLog() {
  const Ledger& l = ledger();
  const size_t used = std::min<size_t>(l.log_used.load(), sizeof(l.log) - 1);
  return std::string(l.log, strnlen(l.log, used));
}

int liveThreads() {
  return g_live_threads.load();
}
void threadStarted() {
  g_live_threads.fetch_add(1);
}
void threadEnded() {
  g_live_threads.fetch_sub(1);
}

}  // namespace synk::standin
