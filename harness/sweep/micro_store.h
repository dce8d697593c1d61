#pragma once
// Google Benchmark results (micro_import.h) as a stored run, so `compare` and `history` cover the
// runtime's micro-benchmarks (synk-micro) the way they cover experiments:
//   run          kind "micro", experiment = the executable's name ("synk-micro"), this machine's
//                context (the file must have been written on this host), the commit from the
//                file's synk.commit context (synk-micro records it) or the caller's
//   point        one per benchmark, axes {"benchmark": NAME}; its comparability key hashes the
//                benchmark's name, the file's identifying context (executable, library build
//                type, CPUs, the custom synk.* entries but synk.commit) and the machine key
//   repetition   one per Google Benchmark repetition, value = real time per iteration (seconds);
//                one sample each, the same time in whole nanoseconds (for show and export)
// Several files (one repetition each, from runs alternating with another build) become one run
// whose repetitions are theirs in file order; their identifying contexts must agree.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synk/harness/store/store.h"
#include "synk/harness/sweep/micro_import.h"

namespace synk::harness {

struct MicroImportOptions {
  std::string tag;
  std::string command_line;
  std::string commit;  // when the files do not say (no synk.commit context)
};

// The context entries that identify what was measured, as "context.NAME = VALUE" lines (the
// run's resolved configuration). Host, date, load and clock speed are left out: they describe
// the moment, not the measurement.
std::string microIdentity(const MicroResults& results);

// Stores `files` (read from `paths`) as one run and returns its id. Throws BadInput for no
// files, a file from another host, or files whose identifying contexts differ.
int64_t importMicroRun(Store& store, const std::vector<MicroResults>& files,
                       const std::vector<std::string>& paths, const MicroImportOptions& options);

}  // namespace synk::harness
