// Every shared-variable collective of the Session API at a latency-bound and a bandwidth-bound
// size, timed per call until every rank has finished it. `bytes` is nccl-tests' S: the
// variable's size for broadcast, reduce and all_reduce; all ranks' parts together for scatter,
// gather and all_gather. busbw uses harness/measure.h's factors (scatter's is gather's,
// (n − 1)/n, as in nccl-tests).
#include <benchmark/benchmark.h>

#include <functional>

#include "synk/harness/stats/measure.h"
#include "tests/bench/micro/micro_session.h"

namespace synk::micro {
namespace {

using harness::Collective;

struct CollectiveBench {
  const char* name;
  Collective busbw_as;
  // Runs once before the timed loop, with the benchmark's byte count.
  std::function<void(MicroSession&, int64_t bytes)> setup;
  // Runs before each call, untimed (a call that changes the variable's shape undone).
  std::function<void(MicroSession&)> prepare;
  std::function<void(MicroSession&)> call;
};

void holdWhole(MicroSession& m, int64_t bytes) {
  m.session.broadcast({m.v}, {rowsOf(bytes)});
}
void scatterSource(MicroSession& m, int64_t bytes) {
  m.source = m.session.data(rowsOf(bytes));
}
void holdParts(MicroSession& m) {
  m.session.scatter({m.v}, {m.source});
  m.complete();
}

const std::vector<CollectiveBench>& collectiveBenches() {
  static const std::vector<CollectiveBench> benches = {
      {"broadcast", Collective::Broadcast, holdWhole, nullptr,
       [](MicroSession& m) { m.session.broadcast({m.v}); }},
      {"scatter", Collective::Gather, scatterSource, nullptr,
       [](MicroSession& m) { m.session.scatter({m.v}, {m.source}); }},
      {"gather", Collective::Gather,
       [](MicroSession& m, int64_t bytes) {
         scatterSource(m, bytes);
         holdParts(m);
       },
       nullptr, [](MicroSession& m) { benchmark::DoNotOptimize(m.session.gather({m.v}, 0)); }},
      {"all_gather", Collective::AllGather, scatterSource, holdParts,
       [](MicroSession& m) { m.session.allGather({m.v}); }},
      {"reduce", Collective::Reduce, holdWhole, nullptr,
       [](MicroSession& m) { benchmark::DoNotOptimize(m.session.reduce({m.v}, ReduceOp::Sum)); }},
      {"all_reduce", Collective::AllReduce, holdWhole, nullptr,
       [](MicroSession& m) { m.session.allReduce({m.v}, ReduceOp::Sum); }},
  };
  return benches;
}

void run(MicroSession& micro, const CollectiveBench& bench, benchmark::State& state) {
  const int64_t bytes = state.range(0);
  bench.setup(micro, bytes);
  // One untimed call first: the first one after a shape change grows and maps buffers.
  if (bench.prepare) bench.prepare(micro);
  bench.call(micro);
  micro.complete();
  for (auto _ : state) {
    if (bench.prepare) bench.prepare(micro);
    const Clock::time_point start = Clock::now();
    bench.call(micro);
    micro.complete();
    state.SetIterationTime(secondsSince(start));
  }
  if (micro.source) micro.source.freeMemory();
  const double factor = harness::busbwFactor(bench.busbw_as, micro.session.size());
  state.SetBytesProcessed(int64_t(state.iterations()) * bytes);
  state.counters["busbw_GBps"] = benchmark::Counter(double(bytes) * factor * 1e-9,
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void registerCollectiveBenchmarks(MicroSession& micro) {
  for (const CollectiveBench& bench : collectiveBenches()) {
    registerGuarded(bench.name,
                    [&micro, &bench](benchmark::State& state) { run(micro, bench, state); })
        ->Arg(kSmallBytes)
        ->Arg(kLargeBytes)
        ->UseManualTime();
  }
}

}  // namespace synk::micro
