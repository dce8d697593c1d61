#pragma once
// Google Benchmark results (synk-micro's, or any program's) as synk-bench takes them: one value
// per repetition, the unit `compare` tests. Read from Google Benchmark's own JSON output
// (--benchmark_out=FILE --benchmark_out_format=json), so no custom reporter has to track the
// library's reporter interface; aggregates (mean, median, stddev, cv) are dropped, since
// synk-bench computes its own from the repetitions.
#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace synk::harness {

struct MicroRepetition {
  int index = 0;  // repetition_index
  int64_t iterations = 0;
  double real_seconds = 0;  // per iteration (manual time for UseManualTime benchmarks)
  double cpu_seconds = 0;   // per iteration, the calling thread's
  // User counters and the rates Google Benchmark derives (bytes_per_second, busbw_GBps, ...).
  std::map<std::string, double> counters;
};

struct MicroBenchmark {
  std::string name;  // Google Benchmark's run_name: "all_reduce/4096/manual_time"
  std::vector<MicroRepetition> repetitions;  // in repetition order
  std::string error;  // set when the benchmark reported an error or was skipped
};

struct MicroResults {
  // Every scalar field of the JSON's "context" (date, host_name, num_cpus, library_build_type,
  // custom ones such as synk.backend and synk.ranks), as text.
  std::map<std::string, std::string> context;
  std::vector<MicroBenchmark> benchmarks;  // in the file's order
};

// Throws InvalidArgument naming `source` and the field for input that is not Google Benchmark
// JSON, a benchmark with aggregates only (run with --benchmark_report_aggregates_only), or an
// unknown time unit.
MicroResults readMicroResults(std::istream& json, const std::string& source);
MicroResults readMicroResultsFile(const std::string& path);

}  // namespace synk::harness
