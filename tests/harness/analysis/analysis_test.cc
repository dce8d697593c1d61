// harness/analysis.h: per-point summaries and speedups from records, computed by hand.
#include <catch2/catch.hpp>

#include "synk/harness/analysis/analysis.h"

using namespace synk::harness;

namespace {

// A point whose repetitions have the given step times (ms), 3 steps each around that value.
AnalysedPoint point(const std::string& key, int ranks, int64_t batch,
                    const std::vector<double>& rep_ms, const std::string& backend = "cpu") {
  AnalysedPoint a;
  a.record.key = key;
  a.record.axes = {
      {"ranks", std::to_string(ranks)}, {"batch", std::to_string(batch)}, {"backend", backend}};
  std::vector<SampleRecord> samples;
  for (int r = 0; r < static_cast<int>(rep_ms.size()); ++r) {
    const int64_t ns = static_cast<int64_t>(rep_ms[r] * 1e6);
    for (int64_t delta : {-1000, 0, 5000})  // median of each repetition: exactly rep_ms
      samples.push_back(
          {r, 0, static_cast<int32_t>(samples.size()), ns + delta, kNoValue, kNoValue});
  }
  a.summary = summarizePoint(samples, {});
  return a;
}

}  // namespace

TEST_CASE("a point's step time is the median of its repetition medians", "[harness]") {
  const std::vector<SampleRecord> samples = {
      // repetition 0: 1, 2, 9 ms -> 2; repetition 1: 3, 4 ms -> 3.5; repetition 2: 100 ms
      {0, 0, 0, 1000000, 600000, 400000},     {0, 0, 1, 2000000, 1500000, 500000},
      {0, 0, 2, 9000000, 8000000, 1000000},   {1, 0, 0, 3000000, kNoValue, kNoValue},
      {1, 0, 1, 4000000, kNoValue, kNoValue}, {2, 0, 0, 100000000, kNoValue, kNoValue},
      {2, 1, 0, 555, kNoValue, kNoValue}};  // another rank's sample: not the master's clock
  const PointSummary s = summarizePoint(
      samples, {{0, 2000, 3, PointStatus::ok, ""}, {1, 4000, 2, PointStatus::ok, ""}});
  REQUIRE(s.repetition_medians.size() == 3);
  CHECK(s.repetition_medians[0] == Approx(2e-3));
  CHECK(s.repetition_medians[1] == Approx(3.5e-3));
  CHECK(s.step_s == Approx(3.5e-3));
  CHECK(*s.compute_s == Approx(1.5e-3));
  CHECK(*s.collective_s == Approx(0.5e-3));
  CHECK(*s.startup_s == Approx(3e-6));
  CHECK(s.samples == 6);
}

TEST_CASE("collectives: the slowest rank per iteration, then the median", "[harness]") {
  const std::vector<SampleRecord> samples = {{0, 0, 0, 10, -1, -1}, {0, 1, 0, 30, -1, -1},
                                             {0, 0, 1, 20, -1, -1}, {0, 1, 1, 5, -1, -1},
                                             {0, 0, 2, 50, -1, -1}, {0, 1, 2, 40, -1, -1}};
  CHECK(slowestRankMedian(samples) == Approx(30e-9));  // max per step: 30, 20, 50
}

TEST_CASE("weak scaling: speedup N t1 / tN at the same per-rank batch", "[harness]") {
  const std::vector<AnalysedPoint> points = {
      point("a", 1, 64, {10, 10, 10}), point("b", 2, 64, {12.5, 12.5, 12.5}),
      point("c", 4, 64, {20, 20, 20}), point("d", 2, 128, {30, 30, 30}),  // no 1-rank at 128
      point("e", 2, 64, {12.5, 12.5, 12.5}, "cuda")};                     // no cuda baseline
  const auto rows = scalingRows(points, Scaling::Weak, Scaling::Weak);
  REQUIRE(rows.size() == 5);
  CHECK(*rows[0].speedup == Approx(1.0));
  CHECK(*rows[1].speedup == Approx(1.6));  // 2 x 10 / 12.5
  CHECK(*rows[1].efficiency == Approx(0.8));
  CHECK(rows[1].speedup_ci->low == Approx(1.6));  // constant repetitions: a point interval
  CHECK(rows[1].speedup_ci->high == Approx(1.6));
  CHECK(*rows[2].speedup == Approx(2.0));
  CHECK(*rows[2].efficiency == Approx(0.5));
  CHECK(rows[1].rows == 128);
  CHECK(rows[1].samples_per_s == Approx(128 / 12.5e-3));
  CHECK_FALSE(rows[3].speedup);
  CHECK_FALSE(rows[4].speedup);
}

TEST_CASE("strong scaling: speedup t1 / tN at the same global batch", "[harness]") {
  SECTION("from a strong-scaling run") {
    const std::vector<AnalysedPoint> points = {point("a", 1, 128, {12}), point("b", 4, 128, {4})};
    const auto rows = scalingRows(points, Scaling::Strong, Scaling::Strong);
    CHECK(*rows[1].speedup == Approx(3.0));
    CHECK(*rows[1].efficiency == Approx(0.75));
  }
  SECTION("from a weak-scaling run: 1 rank at batch 128 against 2 ranks at 64 each") {
    const std::vector<AnalysedPoint> points = {point("a", 1, 128, {12}), point("b", 2, 64, {8}),
                                               point("c", 1, 64, {7})};
    const auto rows = scalingRows(points, Scaling::Weak, Scaling::Strong);
    CHECK(*rows[1].speedup == Approx(1.5));
    const auto weak = scalingRows(points, Scaling::Weak, Scaling::Weak);
    CHECK(*weak[1].speedup == Approx(2 * 7.0 / 8));
  }
  SECTION("the interval covers the repetitions' spread") {
    const std::vector<AnalysedPoint> points = {point("a", 1, 64, {10, 11, 9, 10.5, 9.5}),
                                               point("b", 2, 64, {12, 13, 11, 12.5, 11.5})};
    const auto rows = scalingRows(points, Scaling::Weak, Scaling::Weak);
    REQUIRE(rows[1].speedup_ci);
    CHECK(rows[1].speedup_ci->low < *rows[1].speedup);
    CHECK(rows[1].speedup_ci->high > *rows[1].speedup);
    CHECK(rows[1].speedup_ci->low >= 2 * 9.0 / 13);
    CHECK(rows[1].speedup_ci->high <= 2 * 11.0 / 11);
    const auto again = scalingRows(points, Scaling::Weak, Scaling::Weak);  // seeded by the keys
    CHECK(again[1].speedup_ci->low == rows[1].speedup_ci->low);
  }
}

TEST_CASE("energy per step is the read window's power times the median step", "[harness]") {
  // Two repetitions of 2 ms steps on two GPUs at 150 W and 250 W. The first's NVML window
  // covered only its timed steps; the second's also warm-up steps and the check after them (a
  // window 5x longer at the same power: 5x the joules): both give 0.8 J a step.
  std::vector<SampleRecord> samples;
  for (int r = 0; r < 2; ++r)
    for (int step = 0; step < 4; ++step)
      samples.push_back({r, 0, step, 2'000'000, kNoValue, kNoValue});
  std::vector<RepetitionRecord> reps;
  for (int r = 0; r < 2; ++r) {
    RepetitionRecord rep{r, 0, 4, PointStatus::ok, ""};
    for (double watts : {150.0, 250.0}) {
      GpuReading g;
      g.seconds = r == 0 ? 8e-3 : 40e-3;
      g.power_w = watts;
      g.energy_j = watts * g.seconds;
      rep.gpus.push_back(g);
    }
    reps.push_back(rep);
  }
  const PointSummary s = summarizePoint(samples, reps);
  REQUIRE(s.energy_per_step_j);
  CHECK(*s.energy_per_step_j == Approx(0.8));
  CHECK(s.energy_min_j == Approx(0.8));
  CHECK(s.energy_max_j == Approx(0.8));
  CHECK(*s.power_w == Approx(400));
}

TEST_CASE("step times: per-rank medians and a straggler only when consistently slower",
          "[harness]") {
  // Two ranks over 2 repetitions x 10 steps. Rank 1 works 3 ms (device time where given), rank 0
  // 1 ms and waits 2 ms; in `mixed` rank 1 is slower in only half the steps.
  auto record = [](int rep, int step, int rank, int64_t work_us, int64_t device_us,
                   int64_t wait_us) {
    RankTimesRecord t;
    t.repetition = rep;
    t.step = step;
    t.rank = rank;
    t.work_ns = work_us * 1000;
    t.device_ns = device_us < 0 ? -1 : device_us * 1000;
    t.path_ns = 5000;
    t.wait_ns = wait_us * 1000;
    t.step_ns = (work_us + wait_us) * 1000 + 5000;
    return t;
  };
  std::vector<RankTimesRecord> slow, mixed, gpu;
  for (int rep = 0; rep < 2; ++rep) {
    for (int step = 0; step < 10; ++step) {
      slow.push_back(record(rep, step, 0, 1000, -1, 2000));
      slow.push_back(record(rep, step, 1, 3000, -1, 10));
      const bool odd = step % 2 == 1;
      mixed.push_back(record(rep, step, 0, odd ? 3000 : 1000, -1, 0));
      mixed.push_back(record(rep, step, 1, odd ? 1000 : 3000, -1, 0));
      // On GPUs the device's time decides, not the host's issuing.
      gpu.push_back(record(rep, step, 0, 900, 1000, 2000));
      gpu.push_back(record(rep, step, 1, 100, 3000, 10));
    }
  }
  const std::optional<StepTimesSummary> s = summarizeStepTimes(slow);
  REQUIRE(s);
  REQUIRE(s->ranks.size() == 2);
  CHECK(s->ranks[0].work_s == Approx(1e-3));
  CHECK(s->ranks[0].wait_s == Approx(2e-3));
  CHECK_FALSE(s->ranks[0].device_s);
  CHECK(s->ranks[1].step_s == Approx(3.015e-3));
  REQUIRE(s->straggler);
  CHECK(s->straggler->rank == 1);
  CHECK(s->straggler->slowest_share == Approx(1.0));
  CHECK(s->straggler->excess == Approx(2.0));
  CHECK_FALSE(summarizeStepTimes(mixed)->straggler);
  const std::optional<StepTimesSummary> g = summarizeStepTimes(gpu);
  REQUIRE(g->straggler);
  CHECK(g->straggler->rank == 1);
  CHECK(*g->ranks[1].device_s == Approx(3e-3));
  CHECK_FALSE(summarizeStepTimes({}));
}
