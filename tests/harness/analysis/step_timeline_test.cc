// timelineSteps (analysis/step_times.h): which steps the HTML report's timeline draws — the
// median and the slowest step of the median repetition — from synthetic rank times.
#include <catch2/catch.hpp>
#include <vector>

#include "synk/harness/analysis/step_times.h"

using namespace synk::harness;

namespace {

// Rank 0 takes `us` microseconds (all work), rank 1 half of it and waits the rest.
void addStep(std::vector<RankTimesRecord>& times, int rep, int step, int64_t us) {
  const int64_t ns = us * 1000;
  times.push_back({rep, step, 1, ns / 2, -1, 0, ns / 2, ns});  // out of rank order
  times.push_back({rep, step, 0, ns, -1, 0, 0, ns});
}

}  // namespace

TEST_CASE("timeline steps: the median repetition's median and slowest step", "[harness]") {
  std::vector<RankTimesRecord> times;
  const std::vector<std::vector<int64_t>> reps = {
      {100, 90, 110, 100, 100},   // median 100
      {300, 310, 290, 300, 300},  // median 300
      {250, 200, 180, 900, 210},  // median 210: the median repetition
  };
  for (int rep = 0; rep < 3; ++rep)
    for (int step = 0; step < 5; ++step)
      addStep(times, rep, step, reps[size_t(rep)][size_t(step)]);
  const std::vector<TimelineStep> steps = timelineSteps(times);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].which == "median step");
  CHECK(steps[0].repetition == 2);
  CHECK(steps[0].step == 4);
  CHECK(steps[0].step_s == Approx(210e-6));
  CHECK(steps[1].which == "slowest step");
  CHECK(steps[1].repetition == 2);
  CHECK(steps[1].step == 3);
  CHECK(steps[1].step_s == Approx(900e-6));
  REQUIRE(steps[1].ranks.size() == 2);
  CHECK(steps[1].ranks[0].rank == 0);
  CHECK(steps[1].ranks[1].rank == 1);
  CHECK(steps[1].ranks[1].wait_ns == 450'000);
  // summarizeStepTimes carries them.
  CHECK(summarizeStepTimes(times)->timeline.size() == 2);
}

TEST_CASE("timeline steps: ties, one step, an even count of repetitions, none", "[harness]") {
  std::vector<RankTimesRecord> one;
  addStep(one, 0, 7, 50);
  const std::vector<TimelineStep> single = timelineSteps(one);
  REQUIRE(single.size() == 1);  // the median step is the slowest: drawn once
  CHECK(single[0].step == 7);
  std::vector<RankTimesRecord> even;
  for (int step = 0; step < 4; ++step) {
    addStep(even, 0, step, 100);  // every step alike: the slowest is no slower, drawn once
    addStep(even, 1, step, 200);
  }
  const std::vector<TimelineStep> tied = timelineSteps(even);
  REQUIRE(tied.size() == 1);
  CHECK(tied[0].repetition == 0);  // of two repetitions, the lower median
  CHECK(tied[0].which == "median step");
  CHECK(tied[0].step == 1);  // the lower median of four alike, in step order
  CHECK(timelineSteps({}).empty());
}
