#pragma once
// A backend built into a module of its own (libsynk_cuda_backend.so) carries its own copy of
// synk's core, and the program never sets that copy's process-wide state: the log's rank prefix,
// threshold and test sink, and the phase clock (SYNK_PHASES, ForkOptions::step_times). Left
// alone, the module's copy logs "synk: " without the rank, and drops every phase it times (the
// cuda device's waits: RankStepTimes::device_wait_ns stayed 0 on GPUs). So each rank hands its
// backend factory the program's link before it creates the backend (BackendFactory::linkHost),
// and the module's copy then writes its log messages and phases through the program's.
// Plain C: it crosses between two copies of synk.
#include <cstddef>
#include <cstdint>

extern "C" {
struct SynkHostLink {
  int log_threshold;  // synk::LogLevel
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
// Routes this copy's log messages and phases through `link` and takes its switches. A link to
// this very copy (a program that links the backend statically, or a test restoring a saved
// link) writes here again.
void useHostLink(const SynkHostLink& link);

}  // namespace synk
