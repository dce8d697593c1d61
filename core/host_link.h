#pragma once
// A backend built into a module of its own (libsynk_cuda_backend.so) carries its own copy of
// synk's core, and the program never sets that copy's process-wide state: the log's rank prefix,
// threshold and test sink, and the phase clock (SYNK_PHASES, ForkOptions::step_times). Left
// alone, the module's copy logs "synk: " without the rank, and drops every phase it times (the
// cuda device's waits: RankStepTimes::device_wait_ns stayed 0 on GPUs). So each rank hands its
// backend factory the program's link before it creates the backend (BackendFactory::linkHost,
// through createBackend in core/backend.h), and the module's copy then writes its log messages
// and phases through the program's.
// Plain C: it crosses between two copies of synk. The module's copy writes through the program's
// functions, so the program's copy must outlive it (the module is never unloaded, and its copy
// is reached only from the program's). Before the first link (a factory's isViable, deviceCount
// or checkBeforeFork in the master) the module's copy still writes on its own; none of them logs.
// Each link rewrites the copy's switches, single-threaded, before create(): a later session's
// link replaces what an earlier one left, in the master and in the ranks it forks.
#include <cstddef>
#include <cstdint>

extern "C" {
struct SynkHostLink {
  int log_threshold;  // synk::LogLevel: restored by a link to its own copy; others let all through
  // A message without a prefix (the program adds its own), and a line that carries its own.
  void (*log_message)(int level, const char* text, size_t length);
  void (*log_line)(int level, const char* text, size_t length);
  int phases_on;      // SYNK_PHASES
  int step_times_on;  // ForkOptions::step_times
  void (*phase_add)(int phase, int64_t nanoseconds);
};
}

namespace synk {

// This copy's link: its functions, and its threshold and phase switches now.
SynkHostLink hostLink();
// Routes this copy's log messages (every level: the other copy filters) and phases through
// `link`, and takes its phase switches. A link to this very copy (a program that links the
// backend statically, or a test restoring a saved link) writes here again, with its threshold.
void useHostLink(const SynkHostLink& link);

}  // namespace synk
