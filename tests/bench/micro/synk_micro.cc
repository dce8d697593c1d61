// synk-micro: Google Benchmark benchmarks of the runtime itself (the step costs and every
// variable collective), on one session of cpu or cuda ranks forked before any benchmark runs.
//   synk-micro [--ranks=N] [--backend=cpu|cuda] [--devices=0,1,...] [Google Benchmark flags]
//   mpirun -np NODES --map-by ppr:1:node synk-micro --ranks=0 --ranks-per-node=R ...
//     one session over the nodes (cluster/README.md): the benchmarks run on node 0's launcher
//   synk-micro --benchmark_repetitions=9 --benchmark_out=micro.json --benchmark_out_format=json
// Each repetition is one sample for `synk-bench compare`: `synk-bench import-micro micro.json`
// stores the JSON as a run (harness/micro_store.h), its commit from the synk.commit context.
// Defaults: 2 ranks, cpu (or SYNK_BENCH_RANKS, SYNK_BENCH_BACKEND); --devices=0,0 puts two ranks on
// one GPU where the runtime allows it. A cuda session forks once per process: run cpu and cuda
// separately.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "synk/harness/plan/context.h"
#include "tests/bench/micro/micro_session.h"

namespace {

struct Flags {
  int ranks = 2;
  std::string backend = "cpu";
  std::vector<int> devices;  // empty: rank r on device r
  int ranks_per_node = 0;    // under a launcher of several nodes (0: every device there)
};

std::vector<int> parseDevices(const std::string& list) {
  std::vector<int> devices;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int device = -1;
    try {
      device = std::stoi(item, &used);
    } catch (const std::exception&) {
    }
    if (device < 0 || used != item.size()) {
      throw std::invalid_argument("--devices=" + list + ": '" + item + "' is not a device number");
    }
    devices.push_back(device);
  }
  return devices;
}

// Takes --ranks=N, --backend=NAME, --ranks-per-node=N and --devices=LIST out of argv (what Google
// Benchmark left).
Flags takeFlags(int& argc, char** argv) {
  Flags flags;
  if (const char* env = std::getenv("SYNK_BENCH_RANKS"); env && *env) flags.ranks = std::atoi(env);
  if (const char* env = std::getenv("SYNK_BENCH_BACKEND"); env && *env) flags.backend = env;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ranks=", 8) == 0) {
      flags.ranks = std::atoi(argv[i] + 8);
    } else if (std::strncmp(argv[i], "--backend=", 10) == 0) {
      flags.backend = argv[i] + 10;
    } else if (std::strncmp(argv[i], "--ranks-per-node=", 17) == 0) {
      flags.ranks_per_node = std::atoi(argv[i] + 17);
    } else if (std::strncmp(argv[i], "--devices=", 10) == 0) {
      flags.devices = parseDevices(argv[i] + 10);
      flags.ranks = int(flags.devices.size());
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // handles --help before anything forks
  Flags flags;
  try {
    flags = takeFlags(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synk-micro: %s\n", e.what());
    return 2;
  }
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (flags.ranks < 0) {
    std::fprintf(stderr, "synk-micro: --ranks must be 0 (one per device) or more\n");
    return 2;
  }
  try {
    // The commit this synk-micro was built from, for `synk-bench import-micro` (read before
    // any rank exists: it runs git).
    const synk::harness::SourceState source = synk::harness::sourceState();
    benchmark::AddCustomContext("synk.commit", source.commit);
    benchmark::AddCustomContext("synk.dirty", source.dirty ? "true" : "false");
    auto micro = std::make_unique<synk::micro::MicroSession>();
    // A rank that hangs fails the run within a minute rather than the default ten.
    micro->session = synk::fork({.n_parallel = flags.ranks,
                                 .ranks_per_node = flags.ranks_per_node,
                                 .backend = flags.backend,
                                 .devices = flags.devices,
                                 .timeout = std::chrono::seconds(60)});
    micro->model = micro->session.load(synk::pluginPath("synk_testkit"));
    micro->noop = micro->session.function(micro->model, "noop");
    micro->two_rows = micro->session.data(synk::micro::rowsOf(16));
    micro->v = micro->model.variable("v");
    micro->wait_for_devices = flags.backend != "cpu";
    micro->session.distribute();
    synk::micro::registerStepBenchmarks(*micro);
    synk::micro::registerCollectiveBenchmarks(*micro);
    benchmark::AddCustomContext("synk.ranks", std::to_string(micro->session.size()));
    benchmark::AddCustomContext("synk.backend", flags.backend);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    micro.reset();  // closes the session
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synk-micro: %s\n", e.what());
    return 1;
  }
  return 0;
}
