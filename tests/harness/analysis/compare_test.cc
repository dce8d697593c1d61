// harness/compare.h on synthetic stores: verdicts and exit codes, incomparable and incomplete
// runs, thresholds from a run's configuration, speedup change, run references and baselines,
// the JSON schema, and the command's exit codes through the CLI.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "synk/harness/analysis/compare.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/report/compare/compare_report.h"
#include "tests/harness/noise.h"
#include "tests/harness/synthetic_store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::storeRun;
using synk::harness::test::SyntheticPoint;
using synk::harness::test::syntheticRun;
using synk::harness::test::TempDir;
using synk::testing::Noise;

namespace {

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (double& v : values)
    v *= factor;
  return values;
}

SyntheticPoint point(const std::string& ranks, std::vector<double> values) {
  return {{{"backend", "cpu"}, {"batch", "32"}, {"ranks", ranks}}, std::move(values)};
}

int cli(std::vector<std::string> args) {
  args.insert(args.begin(), "synk-bench");
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  return runCli(static_cast<int>(argv.size()), argv.data());
}

const PointCompare& row(const RunCompare& c, const std::string& label) {
  for (const PointCompare& p : c.points)
    if (p.label == label) return p;
  FAIL("no row " << label);
  throw;
}

}  // namespace

TEST_CASE("compare: identical runs are the same (exit 0), a 10 % slower point regresses (exit 1)",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  Noise noise(3);
  const auto one = noise.around(1e-3, 0.01, 9), two = noise.around(0.6e-3, 0.01, 9);
  const int64_t base =
      storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", one), point("2", two)});
  const int64_t same =
      storeRun(store, syntheticRun("toy", "c2", "t2"), {point("1", one), point("2", two)});
  const int64_t slower = storeRun(store, syntheticRun("toy", "c3", "t3"),
                                  {point("1", one), point("2", scaled(two, 1.1))});

  const RunCompare identical = compareRuns(store, base, same, {});
  CHECK(identical.exit_code == kExitOk);
  CHECK(identical.count(Verdict::Same) == 2);
  CHECK(row(identical, "cpu batch=32 ranks=2").result.change == 0);

  const RunCompare worse = compareRuns(store, base, slower, {});
  CHECK(worse.exit_code == kExitRegression);
  const PointCompare& r = row(worse, "cpu batch=32 ranks=2");
  CHECK(r.result.verdict == Verdict::Worse);
  CHECK(r.result.change == Approx(0.10).margin(1e-6));
  CHECK(r.baseline_values.size() == 9);
  CHECK(row(worse, "cpu batch=32 ranks=1").result.verdict == Verdict::Same);

  const RunCompare better = compareRuns(store, slower, base, {});
  CHECK(better.exit_code == kExitOk);
  CHECK(better.count(Verdict::Better) == 1);
  CompareOptions strict_improvement;
  strict_improvement.fail_on_improvement = true;
  CHECK(compareRuns(store, slower, base, strict_improvement).exit_code == kExitRegression);
}

TEST_CASE("compare: fewer than 5 repetitions a side cannot reach significance (exit 3)",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  const std::vector<double> four = {1e-3, 1.01e-3, 0.99e-3, 1e-3};
  const int64_t a = storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", four)});
  const int64_t b = storeRun(store, syntheticRun("toy", "c2", "t2"), {point("1", scaled(four, 2))});
  const RunCompare c = compareRuns(store, a, b, {});
  CHECK(c.exit_code == kExitRunFailed);
  CHECK(c.points[0].result.verdict == Verdict::Incomparable);
  CHECK_THAT(c.points[0].result.reason, Catch::Contains("cannot reach significance"));
  CHECK(c.points[0].result.change == Approx(1.0));  // still reported
  CompareOptions three;
  three.min_repetitions = 3;  // the command line's --min-repetitions
  CHECK(compareRuns(store, a, b, three).exit_code == kExitRegression);
}

TEST_CASE("compare: another machine is incomparable (exit 3) unless forced, and says why",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  Noise noise(4);
  const auto values = noise.around(1e-3, 0.01, 7);
  const int64_t here = storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", values)});
  RunRecord there = syntheticRun("toy", "c1", "t2");
  there.machine_key = "machine-2";
  there.gpu_count = 1;
  there.gpu_model = "NVIDIA H100";
  const int64_t other = storeRun(store, there, {point("1", values)});

  const RunCompare refused = compareRuns(store, here, other, {});
  CHECK(refused.exit_code == kExitRunFailed);
  CHECK(refused.points[0].result.verdict == Verdict::Incomparable);
  CHECK(refused.points[0].result.reason == "another machine");
  REQUIRE_FALSE(refused.notes.empty());
  CHECK_THAT(refused.notes[0], Catch::Contains("gpus: none vs 1 x NVIDIA H100") &&
                                   Catch::Contains("--force compares them"));

  CompareOptions force;
  force.force = true;
  const RunCompare forced = compareRuns(store, here, other, force);
  CHECK(forced.exit_code == kExitOk);
  CHECK(forced.forced);
  CHECK(forced.points[0].forced);
  CHECK(forced.points[0].result.verdict == Verdict::Same);
  CHECK_THAT(forced.notes[0], Catch::Contains("compared anyway (--force)"));
}

TEST_CASE("compare: another configuration names the settings that differ", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  const std::vector<double> v = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
  SyntheticPoint a = point("1", v), b = point("1", v);
  a.key = "key-a";
  b.key = "key-b";
  RunRecord changed = syntheticRun("toy", "c2", "t2");
  changed.config_resolved += "model.lr = 0.5\ncompare.min_change = 0.2\n";
  const int64_t first = storeRun(store, syntheticRun("toy", "c1", "t1"), {a});
  const int64_t second = storeRun(store, changed, {b});
  const RunCompare c = compareRuns(store, first, second, {});
  CHECK(c.exit_code == kExitRunFailed);
  // The thresholds are how runs are compared, not what was measured: not listed.
  CHECK(c.points[0].result.reason == "another configuration: +model.lr = 0.5");
}

TEST_CASE("compare: another configuration leads with what changes the computation", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  const std::vector<double> v = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
  SyntheticPoint a = point("1", v), b = point("1", v);
  a.key = "key-a";
  b.key = "key-b";
  RunRecord before = syntheticRun("toy", "c1", "t1"), after = syntheticRun("toy", "c2", "t2");
  before.config_resolved +=
      "experiment.repetitions = 5\nexperiment.steps = 20\nexperiment.warmup = 5\n"
      "experiment.seed = 1\nexperiment.timeout = 600\nmodel.lr = 0.1\n";
  after.config_resolved +=
      "experiment.repetitions = 3\nexperiment.steps = 10\nexperiment.warmup = 2\n"
      "experiment.seed = 2\nexperiment.timeout = 60\nmodel.lr = 0.5\n";
  const int64_t first = storeRun(store, before, {a});
  const int64_t second = storeRun(store, after, {b});
  const RunCompare c = compareRuns(store, first, second, {});
  // model.lr sorts after the experiment.* keys but explains the new key: it comes first, and
  // the measurement settings beyond four are named, not hidden.
  CHECK(c.points[0].result.reason ==
        "another configuration: model.lr: 0.1 -> 0.5; experiment.repetitions: 5 -> 3; "
        "experiment.seed: 1 -> 2; experiment.steps: 20 -> 10; and 2 more "
        "(experiment.timeout, experiment.warmup)");
}

TEST_CASE("compare: a missing point, a failed point or an unfinished run is incomplete (exit 3)",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  const std::vector<double> v = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
  SyntheticPoint failed = point("2", {});
  failed.status = PointStatus::failed;
  SyntheticPoint skipped = point("4", {});
  skipped.status = PointStatus::skipped;
  const int64_t base =
      storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", v), point("2", v), skipped});
  const int64_t cand = storeRun(store, syntheticRun("toy", "c2", "t2"),
                                {point("1", v), failed, point("8", v), skipped}, "interrupted");
  const RunCompare c = compareRuns(store, base, cand, {});
  CHECK(c.exit_code == kExitRunFailed);
  CHECK(c.incomplete);
  CHECK(c.skipped_in_both == 1);
  CHECK(row(c, "cpu batch=32 ranks=1").result.verdict == Verdict::Same);
  CHECK(row(c, "cpu batch=32 ranks=2").result.reason == "candidate point failed");
  CHECK(row(c, "cpu batch=32 ranks=8").result.reason == "only in the candidate run");
  bool noted = false;
  for (const std::string& note : c.notes)
    noted |= note.find("candidate run 2 is interrupted") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("compare: the baseline's [compare] thresholds apply, command-line ones win",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  Noise noise(6);
  const auto v = noise.around(1e-3, 0.005, 9);
  RunRecord lenient = syntheticRun("toy", "c1", "t1");
  lenient.config_resolved += "compare.min_change = 0.2\ncompare.min_repetitions = 6\n";
  const int64_t base = storeRun(store, lenient, {point("1", v)});
  const int64_t cand =
      storeRun(store, syntheticRun("toy", "c2", "t2"), {point("1", scaled(v, 1.1))});
  const RunCompare c = compareRuns(store, base, cand, {});
  CHECK(c.thresholds.min_change == 0.2);
  CHECK(c.thresholds.min_repetitions == 6);
  CHECK(c.exit_code == kExitOk);  // 10 % is inside this experiment's 20 %
  CompareOptions flags;
  flags.min_change = 0.05;
  CHECK(compareRuns(store, base, cand, flags).exit_code == kExitRegression);
}

TEST_CASE("compare: speedup and efficiency change against each run's 1-rank point", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  Noise noise(8);
  const auto one = noise.around(1e-3, 0.01, 9), two = noise.around(0.55e-3, 0.01, 9);
  const int64_t base =
      storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", one), point("2", two)});
  const int64_t cand = storeRun(store, syntheticRun("toy", "c2", "t2"),
                                {point("1", one), point("2", scaled(two, 1.25))});
  const RunCompare c = compareRuns(store, base, cand, {});
  const PointCompare& r = row(c, "cpu batch=32 ranks=2");
  REQUIRE(r.scaling);
  CHECK(r.scaling->ranks == 2);
  // Weak scaling: S = 2 t1 / t2; the candidate's t2 is 25 % longer, so S falls by 1 / 1.25.
  CHECK(r.scaling->change.candidate_speedup ==
        Approx(r.scaling->change.baseline_speedup / 1.25).epsilon(1e-6));
  CHECK(r.scaling->change.speedup_interval.high < 0);
  CHECK(r.scaling->change.efficiency_change == Approx(r.scaling->change.speedup_change / 2));
  CHECK(r.scaling->change.verdict == Verdict::Worse);
  CHECK_FALSE(row(c, "cpu batch=32 ranks=1").scaling);  // the reference itself
}

TEST_CASE("run references: ids, latest, baseline names, tags", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  RunRecord tagged = syntheticRun("toy", "c1", "t1");
  tagged.tag = "nightly";
  const int64_t first = storeRun(store, tagged, {});
  const int64_t second = storeRun(store, tagged, {});
  const int64_t third = storeRun(store, syntheticRun("toy", "c3", "t3"), {});
  CHECK(resolveRunRef(store, std::to_string(first)) == first);
  CHECK(resolveRunRef(store, "latest") == third);
  CHECK(resolveRunRef(store, "nightly") == second);  // a tag: its newest run
  store.setBaseline("nightly", first);               // a baseline's name comes before a tag
  CHECK(resolveRunRef(store, "nightly") == first);
  CHECK_THROWS_WITH(resolveRunRef(store, "99"), Catch::Contains("no run 99"));
  CHECK_THROWS_WITH(resolveRunRef(store, "weekly"),
                    Catch::Contains("'weekly' is no run id, baseline or tag") &&
                        Catch::Contains("(baselines: nightly)"));
}

TEST_CASE("compare --json: the documented schema", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  Noise noise(9);
  const auto one = noise.around(1e-3, 0.01, 5), two = noise.around(0.6e-3, 0.01, 5);
  const int64_t base =
      storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", one), point("2", two)});
  const int64_t cand = storeRun(store, syntheticRun("toy", "c2", "t2"),
                                {point("1", one), point("2", scaled(two, 1.2)), point("4", one)});
  const RunCompare c = compareRuns(store, base, cand, {});
  const nlohmann::json json = nlohmann::json::parse(compareJson(c));
  CHECK(json.at("schema") == "synk-bench-compare/1");
  CHECK(json.at("exit") == c.exit_code);
  CHECK(json.at("incomplete") == true);
  CHECK(json.at("thresholds").at("correction") == "benjamini-hochberg");
  CHECK(json.at("thresholds").at("min_change") == 0.05);
  CHECK(json.at("baseline").at("run") == base);
  CHECK(json.at("candidate").at("commit") == "c2");
  CHECK(json.at("summary").at("worse") == 1);
  CHECK(json.at("summary").at("incomparable") == 1);
  const nlohmann::json& points = json.at("points");
  REQUIRE(points.size() == 3);
  const nlohmann::json& slow = points[1];
  CHECK(slow.at("label") == "cpu batch=32 ranks=2");
  CHECK(slow.at("axes").at("ranks") == "2");
  CHECK(slow.at("verdict") == "worse");
  CHECK(slow.at("baseline").at("repetitions") == 5);
  CHECK(slow.at("candidate").at("values_s").size() == 5);
  CHECK(slow.at("change").get<double>() == Approx(0.2).margin(1e-6));
  CHECK(slow.at("p_adjusted").get<double>() <= 0.05);
  CHECK(slow.at("exact") == true);
  CHECK(slow.at("scaling").at("speedup_change").get<double>() < 0);
  CHECK(slow.at("scaling").at("speedup_interval").size() == 2);
  // No NVML in a synthetic run: the energy fields are there, and null.
  CHECK(slow.at("baseline_joules_per_sample").is_null());
  const auto& missing = points[2];
  CHECK(missing.at("verdict") == "incomparable");
  CHECK(missing.at("reason") == "only in the candidate run");
  CHECK(missing.at("change").is_null());
  CHECK(missing.at("scaling").is_null());
}

TEST_CASE("the compare and baseline commands' exit codes", "[harness]") {
  TempDir dir;
  const std::string db = dir.file("c.db");
  Noise noise(10);
  const auto v = noise.around(1e-3, 0.01, 6);
  {
    Store store = Store::open(db, Store::Mode::Write);
    storeRun(store, syntheticRun("toy", "c1", "t1"), {point("1", v)});
    storeRun(store, syntheticRun("toy", "c2", "t2"), {point("1", scaled(v, 1.3))});
  }
  CHECK(cli({"compare", "1", "1", "--db", db}) == kExitOk);
  CHECK(cli({"compare", "1", "2", "--db", db}) == kExitRegression);
  CHECK(cli({"compare", "2", "1", "--db", db}) == kExitOk);
  CHECK(cli({"compare", "2", "1", "--db", db, "--fail-on", "improvement", "--json"}) ==
        kExitRegression);
  CHECK(cli({"compare", "1", "2", "--db", db, "--min-repetitions", "7"}) == kExitRunFailed);
  CHECK(cli({"compare", "1", "3", "--db", db}) == kExitBadInput);
  CHECK(cli({"compare", "1", "--db", db}) == kExitBadInput);
  CHECK(cli({"compare", "1", "2", "--db", db, "--fail-on", "noise"}) == kExitBadInput);
  CHECK(cli({"compare", "1", "2", "--db", dir.file("none.db")}) == kExitBadInput);
  CHECK(cli({"baseline", "release", "1", "--db", db}) == kExitOk);
  CHECK(cli({"compare", "release", "2", "--db", db}) == kExitRegression);
  CHECK(cli({"baseline", "7", "1", "--db", db}) == kExitBadInput);  // would read as a run id
  CHECK(cli({"baseline", "release", "9", "--db", db}) == kExitBadInput);
}
