// The peer of bench_shm_collectives: OpenMPI's MPI_Allreduce (float32 sum) at the same sizes and
// iteration counts (bench_sizes.h), in place like synk's and out of place.
//
//   mpirun --allow-run-as-root -np 2 bench_mpi_allreduce [benchmark flags]
//
// Every rank runs exactly the same benchmarks, iterations and repetitions (fixed, never
// estimated from timings, which differ per rank); only rank 0 reports.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/bench/bench_sizes.h"

namespace synk::bench {
namespace {

class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Pre-faulted buffers, kept across repetitions.
std::vector<float>& bufferFor(std::map<size_t, std::vector<float>>& buffers, size_t count) {
  std::vector<float>& buffer = buffers[count];
  if (buffer.size() != count) buffer.assign(count, 0.0f);
  return buffer;
}

void benchMpiAllReduce(benchmark::State& state, std::map<size_t, std::vector<float>>& buffers,
                       size_t bytes, bool in_place) {
  const int count = static_cast<int>(bytes / sizeof(float));
  float* data = bufferFor(buffers, bytes / sizeof(float)).data();
  float* send = in_place ? nullptr : bufferFor(buffers, bytes / sizeof(float) + 1).data();
  const void* source = in_place ? MPI_IN_PLACE : static_cast<const void*>(send);
  for (int64_t i = 0; i < kWarmupIterations; ++i) {
    MPI_Allreduce(source, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (auto _ : state)
    MPI_Allreduce(source, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double moved = static_cast<double>(bytes);
  const int n = worldSize();
  state.counters["algbw"] =
      benchmark::Counter(moved, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] = benchmark::Counter(moved * allReduceBusFactor(n),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ranks"] = n;
}

int run(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  benchmark::Initialize(&argc, argv);
  std::map<size_t, std::vector<float>> buffers;
  for (bool in_place : {true, false}) {
    for (const AllReduceSize& size : allReduceSizes()) {
      const std::string name = std::string("all_reduce/") +
                               (in_place ? "mpi" : "mpi_out_of_place") +
                               "/bytes:" + std::to_string(size.bytes);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [&buffers, bytes = size.bytes, in_place](benchmark::State& s) {
                                     benchMpiAllReduce(s, buffers, bytes, in_place);
                                   })
          ->Iterations(size.iterations)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SilentReporter silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}

}  // namespace
}  // namespace synk::bench

int main(int argc, char** argv) {
  return synk::bench::run(argc, argv);
}
