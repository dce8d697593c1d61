// synk-bench's own costs, measured against bare peers in the same run (results in
// harness/README.md, "Speed"):
//   1. what the harness adds to a step it times: rounds alternate a bare loop of N calls (timed as
//      a whole, no per-step clock) with the harness's timing loop (timeSteps: a clock read, a
//      sample kept and the stop word checked per step) over the same step of the same session;
//      the overhead is the median over rounds of (harness time per step / bare time per step - 1),
//      many short rounds so that load from other processes hits both sides alike;
//      and, without a real step's noise, the loop's own cost per step in nanoseconds;
//   2. storing a million samples: one Store::addPoint of 10^6 rows into a fresh database, median
//      of several rounds, and reading them back;
//   3. the HTML report and the static site over a database of 1,000,000 samples (2 runs of 8
//      points, 5 repetitions of 12,500 steps each): loading, statistics, rendering, writing;
//   4. GPU telemetry: what the two NVML reads of a point's repetition take (every GPU NVML sees;
//      the real libnvidia-ml.so.1, or SYNK_NVML_LIBRARY), and what they would cost a step of
//      100 us if they ran on a thread beside it (a training repetition now takes them between
//      its phases, beside no step: an upper bound): rounds of 200 steps (a 100 us spin each)
//      alone and with the reads going on beside them, alternated; the cost is the median over
//      rounds of (step with reads / step alone - 1).
//   bench_synk_bench [--rounds R] [--steps N] [--ranks K] [--batch B] [--dir DIR]
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "synk/harness/base/child.h"
#include "synk/harness/config/config.h"
#include "synk/harness/report/html/report_html.h"
#include "synk/harness/report/publish/site.h"
#include "synk/harness/run/gpu_telemetry.h"
#include "synk/harness/run/inputs.h"
#include "synk/harness/run/runner.h"
#include "synk/harness/stats/stats.h"
#include "synk/harness/store/store.h"
#include "synk/synk.h"

using namespace synk;
using namespace synk::harness;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  int rounds = 101, steps = 500, ranks = 1;
  int64_t batch = 64;
  std::string dir = std::filesystem::temp_directory_path().string();
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--rounds") a.rounds = std::atoi(value.c_str());
    if (key == "--steps") a.steps = std::atoi(value.c_str());
    if (key == "--ranks") a.ranks = std::atoi(value.c_str());
    if (key == "--batch") a.batch = std::atoll(value.c_str());
    if (key == "--dir") a.dir = value;
  }
  return a;
}

// User and system time of this process: what the work cost, whatever else the machine runs.
double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void stepOverhead(const Args& a, const std::string& function, int64_t width) {
  Session session = fork({.n_parallel = a.ranks, .backend = "cpu"});
  Model model = session.load(pluginPath("synk_bench_toy"));
  const Experiment e = parseExperiment("[experiment]\nplugin = toy\nfunction = " + function +
                                           "\n[input.x]\nshape = batch, " + std::to_string(width) +
                                           "\n[input.y]\nshape = batch\nrange = 0:9\n",
                                       "bench");
  const FunctionSpec* spec = nullptr;
  for (const FunctionSpec& f : model.spec().functions) {
    if (f.name == function) spec = &f;
  }
  Function f = session.function(model, function);
  std::vector<Data> inputs;
  for (Array& array : makeInputs(*spec, e.inputs, a.batch * a.ranks, 1))
    inputs.push_back(session.data(array));
  for (int w = 0; w < 200; ++w)
    f(inputs);

  StopWord stop;
  const TimingPlan plan{0, 0, a.steps, 0, a.steps};
  std::vector<double> bare_per_step, harness_per_step, ratios;
  for (int round = 0; round < a.rounds; ++round) {
    const auto t0 = Clock::now();
    for (int i = 0; i < a.steps; ++i)
      f(inputs);
    const double bare = seconds(Clock::now() - t0) / a.steps;
    std::vector<SampleRecord> samples;
    const int64_t wall = timeSteps(
        [&](SampleRecord&, Clock::time_point) { f(inputs); },  // the runner's single-call step
        plan, stop, samples);
    const double timed = double(wall) * 1e-9 / a.steps;
    bare_per_step.push_back(bare);
    harness_per_step.push_back(timed);
    ratios.push_back(timed / bare - 1);
  }
  std::printf(
      "step %-12s %d rank(s), batch %lld x %lld: bare %.3f us/step, harness %.3f us/step, "
      "overhead median %+.2f %% (rounds' quartiles %+.2f %%, %+.2f %%)\n",
      function.c_str(), a.ranks, static_cast<long long>(a.batch), static_cast<long long>(width),
      median(bare_per_step) * 1e6, median(harness_per_step) * 1e6, median(ratios) * 100,
      summarize(ratios).q1 * 100, summarize(ratios).q3 * 100);
  std::fflush(stdout);
}

// The harness's own cost per step, without the noise of a real step: its timing loop around a
// step that does nothing. Median of rounds.
void loopCost() {
  StopWord stop;
  constexpr int kSteps = 1000000;
  const TimingPlan plan{0, 0, kSteps, 0, kSteps};
  std::vector<double> per_step;
  for (int round = 0; round < 9; ++round) {
    std::vector<SampleRecord> samples;
    const int64_t wall = timeSteps([](SampleRecord&, Clock::time_point) {}, plan, stop, samples);
    per_step.push_back(double(wall) / kSteps);
  }
  std::printf(
      "harness cost per timed step (a clock read, a sample kept, the stop word checked): median "
      "%.1f ns (min %.1f, max %.1f)\n",
      median(per_step), summarize(per_step).min, summarize(per_step).max);
  std::fflush(stdout);
}

void storeMillion(const Args& a) {
  constexpr int kRows = 1000000;
  std::vector<SampleRecord> samples;
  samples.reserve(kRows);
  for (int i = 0; i < kRows; ++i)
    samples.push_back({i / 100000, (i / 50000) % 2, i % 50000, 1000 + i % 977, kNoValue, kNoValue});
  std::vector<double> writes, write_cpu, reads;
  for (int round = 0; round < 5; ++round) {
    const std::string path = a.dir + "/bench-store-" + std::to_string(getpid()) + ".db";
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path + suffix);
    Store store = Store::open(path, Store::Mode::Write);
    RunRecord run;
    run.experiment = "bench";
    run.kind = "train";
    run.machine_key = "m";
    run.started_at = "now";
    store.beginRun(run);
    PointRecord point;
    point.run_id = run.id;
    point.key = "k";
    point.status = PointStatus::ok;
    const auto t0 = Clock::now();
    const double cpu0 = cpuSeconds();
    store.addPoint(point, {}, samples);
    writes.push_back(seconds(Clock::now() - t0));
    write_cpu.push_back(cpuSeconds() - cpu0);
    const auto t1 = Clock::now();
    const size_t back = store.samples(point.id).size();
    reads.push_back(seconds(Clock::now() - t1));
    if (back != samples.size()) std::printf("read back %zu rows!\n", back);
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path + suffix);
  }
  std::printf(
      "store 1,000,000 samples in %s: write median %.3f s wall, %.3f s CPU (%.2f M rows/s; "
      "wall min %.3f, max %.3f), read back median %.3f s\n",
      a.dir.c_str(), median(writes), median(write_cpu), kRows / median(writes) * 1e-6,
      summarize(writes).min, summarize(writes).max, median(reads));
}

void reportMillion(const Args& a) {
  const std::string path = a.dir + "/bench-report-" + std::to_string(getpid()) + ".db";
  const std::string site = a.dir + "/bench-site-" + std::to_string(getpid());
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path + suffix);
  {
    Store store = Store::open(path, Store::Mode::Write);
    constexpr int kReps = 5, kSteps = 12500;
    for (int r = 0; r < 2; ++r) {
      RunRecord run;
      run.experiment = "bench";
      run.kind = "train";
      run.machine_key = "m";
      run.commit = "c" + std::to_string(r);
      run.started_at = "2026-11-2" + std::to_string(r) + "T00:00:00Z";
      run.config_resolved = "experiment.scaling = weak\n";
      store.beginRun(run);
      int seq = 0;
      for (int ranks : {1, 2, 4, 8}) {
        for (int batch : {64, 512}) {
          PointRecord point;
          point.run_id = run.id;
          point.seq = seq++;
          point.key = "k" + std::to_string(ranks) + "-" + std::to_string(batch);
          point.status = PointStatus::ok;
          point.axes = {{"backend", "cpu"},
                        {"ranks", std::to_string(ranks)},
                        {"batch", std::to_string(batch)}};
          std::vector<RepetitionRecord> reps;
          std::vector<SampleRecord> samples;
          for (int rep = 0; rep < kReps; ++rep) {
            RepetitionRecord r;
            r.repetition = rep;
            r.startup_ns = 5'000'000;
            r.steps = kSteps;
            reps.push_back(r);
            for (int step = 0; step < kSteps; ++step)
              samples.push_back(
                  {rep, 0, step, 100'000 + batch * 10 + (step * 7919) % 977, kNoValue, kNoValue});
          }
          store.addPoint(point, reps, samples);
        }
      }
      store.endRun(run.id, "complete");
    }
  }
  const Store store = Store::open(path, Store::Mode::Read);
  std::vector<double> reports, sites;
  for (int round = 0; round < 3; ++round) {
    auto t0 = Clock::now();
    const RunData data = loadRun(store, 2);
    writeHtmlReport(site + "-report.html", data, runScaling(data.run));
    reports.push_back(seconds(Clock::now() - t0));
    t0 = Clock::now();
    writeSite(store, site);
    sites.push_back(seconds(Clock::now() - t0));
  }
  std::printf(
      "database of 1,000,000 samples (2 runs x 8 points x 5 x 12,500 steps): report of a "
      "run (500,000 samples) median %.3f s; site of the whole database (6 pages, every "
      "run, a compare, the history) median %.3f s (max %.3f)\n",
      median(reports), median(sites), summarize(sites).max);
  std::fflush(stdout);
  std::filesystem::remove_all(site);
  std::filesystem::remove(site + "-report.html");
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path + suffix);
}

void telemetryCost() {
  const GpuTelemetry telemetry = GpuTelemetry::open({kAllGpus});
  if (!telemetry.available()) {
    std::printf("GPU telemetry: %s (nothing to measure)\n", telemetry.status().c_str());
    return;
  }
  size_t gpus = 0;
  std::vector<double> pairs;
  for (int round = 0; round < 51; ++round) {
    const auto t0 = Clock::now();
    const GpuTelemetry::Mark mark = telemetry.mark();
    gpus = telemetry.since(mark).size();
    pairs.push_back(seconds(Clock::now() - t0));
  }
  // A step of 100 us (a spin: what the host does while a GPU step runs), 200 to a round.
  constexpr auto kStep = std::chrono::microseconds(100);
  auto round_of_steps = [&] {
    std::vector<double> steps;
    for (int k = 0; k < 200; ++k) {
      const auto t0 = Clock::now();
      while (Clock::now() - t0 < kStep) {
      }
      steps.push_back(seconds(Clock::now() - t0));
    }
    return median(steps);
  };
  std::vector<double> ratios;
  for (int round = 0; round < 15; ++round) {
    const double alone = round_of_steps();
    std::atomic<bool> done{false};
    std::thread reader([&] {  // the reads on a thread beside the steps: the worst case
      while (!done.load())
        telemetry.since(telemetry.mark());
    });
    const double beside = round_of_steps();
    done = true;
    reader.join();
    ratios.push_back(beside / alone - 1);
  }
  std::printf(
      "GPU telemetry (%s, %zu GPU(s)): the two reads of a repetition take median %.1f us "
      "(max %.1f), taken at the timed phase's edges, outside every step; a 100 us step with "
      "reads going on beside it on another thread: %+.3f %% (median of 15 rounds of 200 "
      "steps)\n",
      telemetry.status().c_str(), gpus, median(pairs) * 1e6, summarize(pairs).max * 1e6,
      median(ratios) * 100);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  storeMillion(a);
  reportMillion(a);
  telemetryCost();
  loopCost();
  if (std::getenv("SYNK_BENCH_STORE_ONLY")) return 0;
  stepOverhead(a, "train_step", 64);
  stepOverhead(a, "train_step", 784);
  return 0;
}
