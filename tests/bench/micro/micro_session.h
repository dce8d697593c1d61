#pragma once
// What every synk-micro benchmark runs on: one session forked before any benchmark, the testkit
// model, and a way to wait until every rank's device has finished (cuda collectives return with
// the work enqueued; cpu ones return done).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "synk/synk.h"

namespace synk::micro {

struct MicroSession {
  Session session;
  Model model;
  Function noop;  // x: float32 [rows, 2] scattered; z: a scalar averaged over ranks
  Data two_rows;  // the trivial call's input
  Variable v;     // float32 [rows, 2]: what the variable collectives move
  Data source;    // the scatter source of the collective benchmark running now
  bool wait_for_devices = false;

  // Ends when every rank's stream has passed the work enqueued so far (Session::synchronize);
  // nothing on cpu ranks.
  void complete() {
    if (wait_for_devices) session.synchronize();
  }
};

// The benchmarks time with UseManualTime through this clock, so a benchmark can leave its
// per-iteration setup (and, on cuda, include the wait for the devices) out of or in the time.
using Clock = std::chrono::steady_clock;
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Payload sizes of the size-dependent benchmarks: a latency-bound one and a bandwidth-bound one.
inline constexpr int64_t kSmallBytes = int64_t{4} << 10;
inline constexpr int64_t kLargeBytes = int64_t{16} << 20;

// float32 rows of 2 columns holding `bytes` (the testkit variable's layout).
Array rowsOf(int64_t bytes);

// Registers `body` as benchmark `name`; an exception from it becomes the benchmark's error (the
// run goes on with the next benchmark, and the JSON records the message).
benchmark::internal::Benchmark* registerGuarded(const std::string& name,
                                                std::function<void(benchmark::State&)> body);

void registerStepBenchmarks(MicroSession& micro);
void registerCollectiveBenchmarks(MicroSession& micro);

}  // namespace synk::micro
