// Google Benchmark of the shared-memory all_reduce (float32 sum, in place) on forked ranks.
//
//   bench_shm_collectives [--ranks=N] [benchmark flags]     (or SYNK_BENCH_RANKS=N; default 2)
//
// The benchmark process is the master (rank 0); before each timed loop it tells the workers the
// size and iteration count through the control block, then every rank runs the same warm-up and
// loop. Reports wall time per op, algbw and busbw (nccl-tests' convention, bench_sizes.h).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"
#include "tests/bench/bench_sizes.h"

namespace synk::bench {
namespace {

struct Command {
  uint64_t bytes;
  int64_t iterations;
};

// One rank's side: its heap, backend and one pre-faulted buffer per size.
class BenchRank {
 public:
  explicit BenchRank(ProcessGroup& group) : group_(group), heap_(group.shmPrefix(), group.rank()) {
    RankEnvironment env{group, heap_, -1};
    backend_ = makeCpuBackendFactory()->create(env);
  }
  ~BenchRank() {
    for (const auto& [bytes, buffer] : buffers_)
      backend_->device().release(buffer);
  }

  // Master: every worker runs `command` next.
  void issue(const Command& command) {
    std::memcpy(group_.barrier().outbox(sizeof command), &command, sizeof command);
    Waiter waiter = group_.commandWaiter("issuing a benchmark command");
    group_.barrier().arrive(waiter, BarrierSite::CommandStart);
  }

  // Worker: runs the master's commands until the master ends the session.
  void serve() {
    for (;;) {
      Waiter waiter = group_.commandWaiter("waiting for the next benchmark command");
      group_.barrier().arrive(waiter, BarrierSite::CommandStart);
      Command command;
      std::memcpy(&command, group_.barrier().exchangeOf(group_.masterRank()), sizeof command);
      const AllReduceArgs args = argsFor(command.bytes);
      for (int64_t i = 0; i < kWarmupIterations + command.iterations; ++i)
        allReduce(args, waiter);
    }
  }

  AllReduceArgs argsFor(size_t bytes) {
    void*& buffer = buffers_[bytes];
    if (!buffer) {
      buffer = backend_->device().allocate(bytes);
      std::memset(buffer, 0, bytes);  // fault every page in before timing
    }
    return {buffer, bytes / sizeof(float), DType::Float32, ReduceOp::Sum};
  }

  void allReduce(const AllReduceArgs& args, Waiter& waiter) {
    backend_->communicator(true).allReduce(args, waiter);
  }
  Waiter waiter() { return group_.commandWaiter("benchmark loop"); }
  int size() const { return group_.size(); }

 private:
  ProcessGroup& group_;
  ShmHeap heap_;
  std::unique_ptr<Backend> backend_;
  std::map<size_t, void*> buffers_;
};

void benchAllReduce(benchmark::State& state, BenchRank& rank, size_t bytes) {
  rank.issue({bytes, state.max_iterations});
  const AllReduceArgs args = rank.argsFor(bytes);
  Waiter waiter = rank.waiter();
  for (int64_t i = 0; i < kWarmupIterations; ++i)
    rank.allReduce(args, waiter);
  for (auto _ : state)
    rank.allReduce(args, waiter);
  const double moved = static_cast<double>(bytes);
  state.counters["algbw"] =
      benchmark::Counter(moved, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] = benchmark::Counter(moved * allReduceBusFactor(rank.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ranks"] = rank.size();
}

// --ranks=N (removed from argv), else SYNK_BENCH_RANKS, else 2.
int takeRankCount(int& argc, char** argv) {
  int ranks = 2;
  if (const char* env = std::getenv("SYNK_BENCH_RANKS")) ranks = std::atoi(env);
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--ranks=", 8) == 0) {
      ranks = std::atoi(argv[i] + 8);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return ranks;
}

int run(int argc, char** argv) {
  ProcessGroupOptions options;
  options.n_ranks = takeRankCount(argc, argv);
  options.timeout = std::chrono::minutes(5);
  auto group = ProcessGroup::create(options, [](ProcessGroup& worker) {
    BenchRank rank(worker);
    try {
      rank.serve();
    } catch (const UsageError&) {
      // The master closed the session: the benchmark is over.
    }
    return kExitOk;
  });
  {
    BenchRank rank(*group);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    for (const AllReduceSize& size : allReduceSizes()) {
      benchmark::RegisterBenchmark(str("all_reduce/shm/bytes:", size.bytes).c_str(),
                                   [&rank, bytes = size.bytes](benchmark::State& state) {
                                     benchAllReduce(state, rank, bytes);
                                   })
          ->Iterations(size.iterations)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  }
  group->shutdown(std::chrono::seconds(5));
  return 0;
}

}  // namespace
}  // namespace synk::bench

int main(int argc, char** argv) {
  return synk::bench::run(argc, argv);
}
