// What every step of a synk program pays, whatever its model: the barrier round trip through
// every rank, a trivial call (scatter 2 rows, run, average a scalar), and the scatter of a Data
// input (on cuda ranks a host-to-device copy of each rank's rows, on cpu ranks a view in place).
#include <benchmark/benchmark.h>

#include "tests/bench/micro/micro_session.h"

namespace synk::micro {

Array rowsOf(int64_t bytes) {
  return Array(DType::Float32, {bytes / 8, 2});
}

benchmark::internal::Benchmark* registerGuarded(const std::string& name,
                                                std::function<void(benchmark::State&)> body) {
  return benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& state) {
    try {
      body(state);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  });
}

void registerStepBenchmarks(MicroSession& micro) {
  registerGuarded("barrier_round_trip", [&micro](benchmark::State& state) {
    for (auto _ : state)
      micro.session.barrier();
  })->UseRealTime();

  // One step in which every rank waits for its device: the floor under anything that waits
  // for a GPU result (on cpu ranks a barrier round trip).
  registerGuarded("synchronize", [&micro](benchmark::State& state) {
    for (auto _ : state)
      micro.session.synchronize();
  })->UseRealTime();

  registerGuarded("trivial_call", [&micro](benchmark::State& state) {
    const std::vector<Data> inputs = {micro.two_rows};
    for (auto _ : state)
      benchmark::DoNotOptimize(micro.noop(inputs));
  })->UseRealTime();

  registerGuarded(
      "scatter_data",
      [&micro](benchmark::State& state) {
        Data x = micro.session.data(rowsOf(state.range(0)));
        const std::vector<Data> inputs = {x};
        micro.noop(inputs);  // maps the segment on every rank (and pins it on cuda ranks)
        for (auto _ : state)
          benchmark::DoNotOptimize(micro.noop(inputs));
        state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
      })
      ->Arg(kSmallBytes)
      ->Arg(kLargeBytes)
      ->UseRealTime();
}

}  // namespace synk::micro
