// `synk-bench export --json`: the versioned schema (export.h) with a summary per point — the
// spread beside the median and the noise warnings a report prints — read back with nlohmann.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "synk/harness/report/publish/export.h"
#include "tests/harness/synthetic_store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using namespace synk::harness::test;

namespace {

nlohmann::json exported(const Store& store, int64_t run, const SummaryOptions& options = {}) {
  TempDir dir;
  const std::string path = dir.file("export.json");
  std::FILE* out = std::fopen(path.c_str(), "w");
  REQUIRE(out);
  exportJson(out, store, run, options);
  std::fclose(out);
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace

TEST_CASE("export --json: schema, run, and a summary per point with its spread", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("e.db"), Store::Mode::Write);
  SyntheticPoint one{{{"backend", "cpu"}, {"batch", "32"}, {"ranks", "1"}},
                     {1.0e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3}};
  // Two groups of repetitions: the median (0.81 ms) stands for the fast sessions only.
  SyntheticPoint two{{{"backend", "cpu"}, {"batch", "32"}, {"ranks", "2"}},
                     {0.80e-3, 2.61e-3, 0.81e-3, 2.58e-3, 0.79e-3}};
  const int64_t run = storeRun(store, syntheticRun("toy", "c1", "t1"), {one, two});
  const nlohmann::json doc = exported(store, run);
  CHECK(doc.at("schema") == "synk-bench-export/1");
  CHECK(doc.at("generator").get<std::string>().rfind("synk-bench ", 0) == 0);
  CHECK(doc.at("run").at("id") == run);
  CHECK(doc.at("run").at("status") == "complete");
  REQUIRE(doc.at("points").size() == 2);
  const nlohmann::json& first = doc.at("points")[0].at("summary");
  CHECK(first.at("n") == 5);
  CHECK(first.at("median").get<double>() == Approx(1.2e-3));
  CHECK(first.at("mean").get<double>() == Approx(1.2e-3));
  CHECK(first.at("stdev").get<double>() == Approx(0.158114e-3).epsilon(1e-4));
  CHECK(first.at("min").get<double>() == Approx(1.0e-3));
  CHECK(first.at("max").get<double>() == Approx(1.4e-3));
  CHECK(first.at("samples_per_s").get<double>() == Approx(32 / 1.2e-3));
  CHECK(first.at("speedup").get<double>() == Approx(1.0));
  CHECK(first.at("joules_per_sample").is_null());  // no NVML here
  CHECK(first.at("warnings").empty());
  const nlohmann::json& second = doc.at("points")[1].at("summary");
  CHECK(second.at("speedup").get<double>() == Approx(2 * 1.2e-3 / 0.81e-3));
  REQUIRE(second.at("warnings").size() == 1);
  CHECK_THAT(second.at("warnings")[0].get<std::string>(), Catch::Contains("two groups"));
  const nlohmann::json& point = doc.at("points")[1];
  CHECK(point.at("repetitions").size() == 5);
  CHECK(point.at("samples").at("rows").size() == 15);  // 5 repetitions x 3 steps
  CHECK(point.at("samples").at("columns")[3] == "ns");
}

TEST_CASE("export --json: a repetition on a throttled GPU is flagged, and can be left out",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("t.db"), Store::Mode::Write);
  RunRecord record = syntheticRun("toy", "c1", "t1");
  store.beginRun(record);
  PointRecord p;
  p.run_id = record.id;
  p.key = "k";
  p.status = PointStatus::ok;
  p.axes = {{"backend", "cuda"}, {"batch", "64"}, {"ranks", "1"}};
  std::vector<RepetitionRecord> reps;
  std::vector<SampleRecord> samples;
  for (int r = 0; r < 5; ++r) {
    RepetitionRecord rep{r, 0, 2, PointStatus::ok, ""};
    // Two steps of 1 ms at 100 W (repetition 4: of 2 ms at 75 W), the read window their time.
    GpuReading gpu;
    gpu.seconds = r == 4 ? 4e-3 : 2e-3;
    gpu.energy_j = r == 4 ? 0.3 : 0.2;
    gpu.power_w = *gpu.energy_j / gpu.seconds;
    gpu.throttle_reasons = r == 4 ? 0x20 : 0;  // repetition 4: software thermal slowdown
    rep.gpus = {gpu};
    reps.push_back(rep);
    for (int step = 0; step < 2; ++step)
      samples.push_back({r, 0, step, r == 4 ? 2'000'000 : 1'000'000});
  }
  store.addPoint(p, reps, samples);
  store.endRun(record.id, "complete");
  const nlohmann::json all = exported(store, record.id).at("points")[0];
  CHECK(all.at("summary").at("throttled_repetitions") == 1);
  CHECK(all.at("summary").at("excluded_repetitions") == 0);
  CHECK(all.at("repetitions")[4].at("gpus")[0].at("throttled") == true);
  CHECK(all.at("repetitions")[0].at("gpus")[0].at("throttled") == false);
  CHECK(all.at("summary").at("max").get<double>() == Approx(2e-3));
  // The power times the median step: 0.1 J (repetition 4: 0.15 J).
  CHECK(all.at("summary").at("energy_per_step_j").get<double>() == Approx(0.1));
  CHECK(all.at("summary").at("joules_per_sample").get<double>() == Approx(0.1 / 64));
  CHECK(all.at("summary").at("samples_per_joule").get<double>() == Approx(640));
  CHECK_THAT(all.at("summary").at("warnings").back().get<std::string>(),
             Catch::Contains("1 of 5 repetition(s) ran on a throttled GPU"));
  const nlohmann::json kept =
      exported(store, record.id, {.exclude_throttled = true}).at("points")[0].at("summary");
  CHECK(kept.at("n") == 4);
  CHECK(kept.at("max").get<double>() == Approx(1e-3));
  CHECK(kept.at("excluded_repetitions") == 1);
}

TEST_CASE("export --json: --exclude-throttled leaves throttled repetitions out of the rank times",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("r.db"), Store::Mode::Write);
  RunRecord record = syntheticRun("toy", "c1", "t1");
  store.beginRun(record);
  PointRecord p;
  p.run_id = record.id;
  p.key = "k";
  p.status = PointStatus::ok;
  p.axes = {{"backend", "cuda"}, {"batch", "64"}, {"ranks", "2"}};
  std::vector<RepetitionRecord> reps;
  std::vector<SampleRecord> samples;
  std::vector<RankTimesRecord> times;
  // Repetition 0 ran unthrottled, both ranks working 1 ms a step; in repetitions 1-3 a GPU
  // throttled and rank 1's work took 3 ms: a straggler only with them counted.
  for (int r = 0; r < 4; ++r) {
    RepetitionRecord rep{r, 0, 2, PointStatus::ok, ""};
    GpuReading gpu;
    gpu.seconds = 6e-3;
    gpu.energy_j = 0.6;
    gpu.power_w = 100;
    gpu.throttle_reasons = r > 0 ? 0x20 : 0;  // software thermal slowdown
    rep.gpus = {gpu};
    reps.push_back(rep);
    for (int step = 0; step < 2; ++step) {
      samples.push_back({r, 0, step, 3'000'000});
      for (int rank = 0; rank < 2; ++rank) {
        const int64_t work = rank == 1 && r > 0 ? 3'000'000 : 1'000'000;
        times.push_back({r, step, rank, work, work, 0, 3'000'000 - work, 3'000'000});
      }
    }
  }
  store.addPoint(p, reps, samples, times);
  store.endRun(record.id, "complete");
  const nlohmann::json all = exported(store, record.id).at("points")[0].at("summary");
  REQUIRE(all.at("rank_times").size() == 2);
  CHECK(all.at("rank_times")[1].at("work_s").get<double>() == Approx(3e-3));
  CHECK(all.at("straggler").at("rank") == 1);
  const nlohmann::json kept =
      exported(store, record.id, {.exclude_throttled = true}).at("points")[0].at("summary");
  CHECK(kept.at("excluded_repetitions") == 3);
  REQUIRE(kept.at("rank_times").size() == 2);
  CHECK(kept.at("rank_times")[1].at("work_s").get<double>() == Approx(1e-3));
  CHECK(kept.at("rank_times")[1].at("wait_s").get<double>() == Approx(2e-3));
  CHECK(kept.at("straggler").is_null());
}

TEST_CASE("export: per-rank step times and the timeline's steps round-trip, JSON and CSV",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("r.db"), Store::Mode::Write);
  RunRecord record = syntheticRun("toy", "c1", "t1");
  store.beginRun(record);
  PointRecord p;
  p.run_id = record.id;
  p.key = "k";
  p.status = PointStatus::ok;
  p.axes = {{"backend", "cpu"}, {"batch", "8"}, {"ranks", "2"}};
  std::vector<RepetitionRecord> reps;
  std::vector<SampleRecord> samples;
  std::vector<RankTimesRecord> times;
  // One repetition of 3 steps: rank 1 works 3 ms, rank 0 works 1 ms and waits 2 ms, both 10 us on
  // the path; step 2 is slower on both ranks (the slowest step).
  reps.push_back({0, 0, 3, PointStatus::ok, ""});
  for (int step = 0; step < 3; ++step) {
    const int64_t extra = step == 2 ? 1'000'000 : 0;
    samples.push_back({0, 0, step, 3'010'000 + extra});
    times.push_back({0, step, 0, 1'000'000, -1, 10'000, 2'000'000 + extra, 3'010'000 + extra});
    times.push_back({0, step, 1, 3'000'000 + extra, -1, 10'000, 0, 3'010'000 + extra});
  }
  store.addPoint(p, reps, samples, times);
  store.endRun(record.id, "complete");
  const nlohmann::json s = exported(store, record.id).at("points")[0].at("summary");
  const nlohmann::json& r0 = s.at("rank_times").at(0);
  CHECK(r0.at("rank") == 0);
  CHECK(r0.at("work_s").get<double>() == Approx(1e-3));
  CHECK(r0.at("device_s").is_null());
  CHECK(r0.at("path_s").get<double>() == Approx(10e-6));
  CHECK(r0.at("wait_s").get<double>() == Approx(2e-3));
  CHECK(r0.at("step_s").get<double>() == Approx(3.01e-3));
  CHECK(s.at("straggler").at("rank") == 1);
  const nlohmann::json& timeline = s.at("timeline");
  REQUIRE(timeline.size() == 2);
  CHECK(timeline[0].at("which") == "median step");
  CHECK(timeline[0].at("step") == 1);  // the lower median of 3.01, 3.01, 4.01 ms
  CHECK(timeline[1].at("which") == "slowest step");
  CHECK(timeline[1].at("step") == 2);
  CHECK(timeline[1].at("step_s").get<double>() == Approx(4.01e-3));
  CHECK(timeline[1].at("ranks")[1].at("work_s").get<double>() == Approx(4e-3));
  CHECK(timeline[1].at("ranks")[0].at("wait_s").get<double>() == Approx(3e-3));
  // The CSV: a header, then one row per rank with the same medians.
  const std::string path = dir.file("ranks.csv");
  std::FILE* out = std::fopen(path.c_str(), "w");
  REQUIRE(out);
  exportRankCsv(out, store, record.id);
  std::fclose(out);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "run,point,seq,key,backend,batch,ranks,status,rank,work_s,device_s,path_s,wait_s,step_s,"
        "straggler");
  const std::string run = std::to_string(record.id);
  CHECK(lines[1].ends_with(",k,cpu,8,2,ok,0,0.001,,1e-05,0.002,0.00301,0"));
  CHECK(lines[2].ends_with(",k,cpu,8,2,ok,1,0.003,,1e-05,0,0.00301,1"));
  CHECK(lines[1].starts_with(run + ","));
}
