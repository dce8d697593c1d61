// harness/run/collectives_runner.h: a job of collectives points on CPU ranks, in this process
// (it becomes the group's master). An op the measurement has no case for fails its point,
// naming the op, instead of being measured as another; the job's next point still runs.
#include <catch2/catch.hpp>

#include "synk/harness/run/collectives_runner.h"

using namespace synk::harness;

namespace {

Point collectivePoint(int index, Collective op) {
  Point p;
  p.index = index;
  p.ranks = 2;
  p.backend = "cpu";
  p.op = op;
  p.dtype = "float32";
  p.redop = "sum";
  p.bytes = 1024;
  return p;
}

Experiment collectivesExperiment(int warmup, int steps) {
  Experiment e;
  e.kind = ExperimentKind::Collectives;
  e.warmup = warmup;
  e.steps = steps;
  e.timeout = 60;
  return e;
}

}  // namespace

TEST_CASE("collectives: an op the measurement does not know fails its point, naming it",
          "[harness]") {
  const Experiment e = collectivesExperiment(1, 2);
  const Point unknown = collectivePoint(0, Collective::ReduceScatter);
  const Point known = collectivePoint(1, Collective::AllReduce);
  StopWord stop;
  const JobOutcome outcome = runCollectivesRepetition(e, {&unknown, &known}, 0, stop);
  INFO(outcome.message);
  CHECK(outcome.status == PointStatus::ok);
  REQUIRE(outcome.points.size() == 2);
  CHECK(outcome.points[0].status == PointStatus::failed);
  CHECK_THAT(outcome.points[0].message,
             Catch::Contains("cannot measure reduce_scatter: it measures all_reduce, broadcast"));
  CHECK(outcome.points[0].samples.empty());
  CHECK(outcome.points[1].status == PointStatus::ok);
  CHECK(outcome.points[1].wrong == 0);
  CHECK(outcome.points[1].samples.size() == 2);  // one back-to-back time per rank
}

// A stop asked before the job starts ends it in the warm-up pass (every point's -w calls before
// the first is timed): the job says interrupted, measures nothing and does not hang.
TEST_CASE("collectives: a stop during the warm-up pass interrupts the job before any point",
          "[harness]") {
  const Experiment e = collectivesExperiment(2, 2);
  const Point a = collectivePoint(0, Collective::AllReduce);
  const Point b = collectivePoint(1, Collective::Broadcast);
  StopWord stop;
  stop.request();
  const JobOutcome outcome = runCollectivesRepetition(e, {&a, &b}, 0, stop);
  INFO(outcome.message);
  CHECK(outcome.status == PointStatus::interrupted);
  CHECK(outcome.points.empty());
}

// -w 0 warms nothing, and the points are measured as before.
TEST_CASE("collectives: without warm-up calls the job still measures every point", "[harness]") {
  const Experiment e = collectivesExperiment(0, 3);
  const Point a = collectivePoint(0, Collective::AllReduce);
  const Point b = collectivePoint(1, Collective::Broadcast);
  StopWord stop;
  const JobOutcome outcome = runCollectivesRepetition(e, {&a, &b}, 0, stop);
  INFO(outcome.message);
  REQUIRE(outcome.points.size() == 2);
  for (const PointOutcome& p : outcome.points) {
    CHECK(p.status == PointStatus::ok);
    CHECK(p.wrong == 0);
    CHECK(p.samples.size() == 2);
  }
}
