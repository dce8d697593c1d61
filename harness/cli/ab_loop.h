#pragma once
// `synk-bench compare --ab BASELINE_BUILD CANDIDATE_BUILD X.ini`: measure two builds on this
// machine alternately, one repetition at a time, so that drift of the machine (other load,
// clocks, temperature) falls on both alike. Round r runs the baseline then the candidate for
// even r and the other way round for odd r (ABBA), each as a separate process of that build:
//   an experiment:  BUILD/bin/synk-bench run X.ini --set experiment.repetitions=1 (own database)
//   micro:          BUILD/bin/synk-micro --benchmark_repetitions=1 --benchmark_out=FILE.json
// Afterwards each build's rounds become one run in the target database (its repetitions in
// round order), tagged TAG-baseline and TAG-candidate, ready for compareRuns. Temporary files
// live in a directory removed at the end. Ctrl-C stops after the process that is running.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace synk::harness {

struct AbOptions {
  std::string baseline_build, candidate_build;  // a build directory, or its bin/synk-bench
  std::string experiment;                       // X.ini; empty with micro
  bool micro = false;                           // synk-micro instead of an experiment
  std::vector<std::string> sets;                // --set KEY=VALUE for every experiment run
  std::vector<std::string> micro_args;          // more synk-micro flags (--ranks=2, ...)
  int rounds = 5;                               // repetitions per build
  std::string db;                               // where both runs go
  std::string tag = "ab";
  std::string command_line;
  std::chrono::seconds process_timeout{6 * 3600};  // one build's round, at most
};

struct AbRuns {
  int64_t baseline = 0, candidate = 0;
};

// The executable `name` of a build: BUILD/bin/NAME for a directory, else NAME beside BUILD (a
// path to an executable). Throws BadInput when it is not there.
std::string buildExecutable(const std::string& build, const std::string& name);

// Throws BadInput (a build or an experiment that is not there, a round refused as bad input) or
// RunFailed (a round that crashed or timed out, Ctrl-C). Progress goes to `progress`.
AbRuns runAlternately(const AbOptions& options, std::FILE* progress);

}  // namespace synk::harness
