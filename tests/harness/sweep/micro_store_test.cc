// harness/micro_store.h: Google Benchmark results stored as a run that compare and history read
// like any other: exact repetition values, stable comparability keys, several files as one run,
// and the refusals (another host, files that measured different things).
#include "synk/harness/sweep/micro_store.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "synk/harness/analysis/compare.h"
#include "synk/harness/base/errors.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::TempDir;

namespace {

// The recorded file, as if measured on this host.
MicroResults recorded() {
  MicroResults r = readMicroResultsFile(SYNK_HARNESS_TEST_DATA "/synk_micro_cpu.json");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r.context["host_name"] = host;
  r.context["synk.commit"] = "0123456789abcdef";
  return r;
}

const char* kPath = "synk_micro_cpu.json";

}  // namespace

TEST_CASE("micro results become a run: a point per benchmark, a repetition per repetition",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("m.db"), Store::Mode::Write);
  const MicroResults r = recorded();
  const int64_t id =
      importMicroRun(store, {r}, {kPath}, {"nightly", "synk-bench import-micro", ""});
  const RunRecord run = *store.run(id);
  CHECK(run.kind == "micro");
  CHECK(run.experiment == "synk-micro");
  CHECK(run.tag == "nightly");
  CHECK(run.commit == "0123456789abcdef");  // from the file's synk.commit
  CHECK(run.status == "complete");
  CHECK_THAT(run.config_resolved, Catch::Contains("context.synk.backend = cpu\n") &&
                                      Catch::Contains("context.executable = synk-micro\n") &&
                                      !Catch::Contains("host_name") && !Catch::Contains("date"));
  const auto points = store.points(id);
  REQUIRE(points.size() == 2);
  CHECK(points[0].axes ==
        std::map<std::string, std::string>{{"benchmark", "barrier_round_trip/real_time"}});
  const std::vector<double> values = repetitionValues(store, points[0], run.kind);
  REQUIRE(values.size() == 3);
  for (size_t i = 0; i < 3; ++i)  // exact, not rounded to whole nanoseconds
    CHECK(values[i] == r.benchmarks[0].repetitions[i].real_seconds);
  CHECK(store.repetitions(points[0].id)[0].steps == 13);  // iterations

  // Imported again: the same keys, so compare pairs them (3 repetitions: cannot reach
  // significance, exit 3, never "same").
  const int64_t again = importMicroRun(store, {r}, {kPath}, {});
  CHECK(store.points(again)[1].key == points[1].key);
  const RunCompare c = compareRuns(store, id, again, {});
  CHECK(c.exit_code == kExitRunFailed);
  CHECK_THAT(c.points[0].result.reason, Catch::Contains("cannot reach significance"));

  // Two files as one run: six repetitions a side, identical values, no regression.
  const int64_t pooled = importMicroRun(store, {r, r}, {kPath, kPath}, {});
  CHECK(store.repetitions(store.points(pooled)[0].id).size() == 6);
  const RunCompare same = compareRuns(store, pooled, pooled, {});
  CHECK(same.exit_code == kExitOk);
  CHECK(same.count(Verdict::Same) == 2);
}

TEST_CASE("micro results: another context is another key, and the refusals", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("m.db"), Store::Mode::Write);
  const MicroResults cpu = recorded();
  MicroResults cuda = cpu;
  cuda.context["synk.backend"] = "cuda";
  const int64_t a = importMicroRun(store, {cpu}, {kPath}, {});
  const int64_t b = importMicroRun(store, {cuda}, {"cuda.json"}, {});
  CHECK(store.points(a)[0].key != store.points(b)[0].key);
  const RunCompare c = compareRuns(store, a, b, {});
  CHECK(c.points[0].result.reason == "another configuration: context.synk.backend: cpu -> cuda");

  CHECK_THROWS_WITH(importMicroRun(store, {cpu, cuda}, {kPath, "cuda.json"}, {}),
                    Catch::Contains("cuda.json measured something else than") &&
                        Catch::Contains("context.synk.backend = cuda"));
  MicroResults elsewhere = cpu;
  elsewhere.context["host_name"] = "another-host";
  CHECK_THROWS_WITH(importMicroRun(store, {elsewhere}, {kPath}, {}),
                    Catch::Contains("was measured on host 'another-host'"));
  CHECK_THROWS_AS(importMicroRun(store, {}, {}, {}), BadInput);
}
