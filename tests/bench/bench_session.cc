// Step costs through the public Session API, 2 ranks by default (SYNK_BENCH_RANKS, backend
// SYNK_BENCH_BACKEND): the barrier round trip every step pays, a trivial function call (scatter
// 2 rows, run, avg of a scalar), and a shared-variable all_reduce.
//   bench_session --benchmark_repetitions=20 --benchmark_report_aggregates_only=true
// Quote the medians. The session is forked once in main(); workers never return from it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "synk/synk.h"

namespace {

struct Bench {
  synk::Session session;
  synk::Model model;
  synk::Function noop;
  synk::Data x;
  synk::Variable v;
};
Bench* g_bench = nullptr;

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

void BM_BarrierRoundTrip(benchmark::State& state) {
  for (auto _ : state)
    g_bench->session.barrier();
}
BENCHMARK(BM_BarrierRoundTrip)->UseRealTime()->MinTime(0.2);

void BM_TrivialCall(benchmark::State& state) {
  const std::vector<synk::Data> inputs = {g_bench->x};
  for (auto _ : state)
    benchmark::DoNotOptimize(g_bench->noop(inputs));
}
BENCHMARK(BM_TrivialCall)->UseRealTime()->MinTime(0.2);

void BM_SessionAllReduce(benchmark::State& state) {
  const int64_t floats = state.range(0) / 4;
  g_bench->session.broadcast(
      {g_bench->v}, {synk::Array(synk::DType::Float32, {std::max<int64_t>(1, floats / 2), 2})});
  for (auto _ : state)
    g_bench->session.allReduce({g_bench->v}, synk::ReduceOp::Sum);
  const int n = g_bench->session.size();
  const double bytes = double(state.range(0));
  // busbw as nccl-tests defines it for all_reduce: algbw * 2(n-1)/n.
  state.counters["busbw_GBps"] = benchmark::Counter(bytes * 2.0 * (n - 1) / n * 1e-9,
                                                    benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_SessionAllReduce)
    ->Arg(8)
    ->Arg(8 << 20)
    ->Arg(64 << 20)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  synk::ForkOptions options;
  options.n_parallel = envInt("SYNK_BENCH_RANKS", 2);
  if (const char* backend = std::getenv("SYNK_BENCH_BACKEND")) options.backend = backend;
  auto bench = std::make_unique<Bench>();
  bench->session = synk::fork(options);
  bench->model = bench->session.load(synk::pluginPath("synk_testkit"));
  bench->noop = bench->session.function(bench->model, "noop");
  bench->x = bench->session.data(synk::Array(synk::DType::Float32, {2, 2}));
  bench->v = bench->model.variable("v");
  bench->session.distribute();
  g_bench = bench.get();
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("synk.ranks", std::to_string(options.n_parallel));
  benchmark::AddCustomContext("synk.backend", options.backend);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_bench = nullptr;
  bench.reset();  // closes the session
  return 0;
}
