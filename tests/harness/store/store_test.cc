// harness/store.h: round trips, migrations, refusals that leave files untouched, concurrent
// writers in separate processes.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <tuple>

#include "synk/harness/base/errors.h"
#include "synk/harness/store/store.h"
#include "synk/harness/store/store_schema.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::TempDir;

namespace {

RunRecord sampleRun() {
  RunRecord run;
  run.experiment = "toy";
  run.kind = "train";
  run.config_text = "[experiment]\n";
  run.config_resolved = "experiment.name = toy\n";
  run.command_line = "synk-bench run toy.ini";
  run.machine_key = "m";
  run.started_at = "2026-01-01T00:00:00Z";
  run.gpu_count = 2;
  run.env = {{"NCCL_DEBUG", "INFO"}};
  return run;
}

PointRecord samplePoint(int64_t run_id, int seq) {
  PointRecord p;
  p.run_id = run_id;
  p.seq = seq;
  p.key = "key" + std::to_string(seq % 3);
  p.axes = {{"ranks", "2"}, {"batch", "64"}, {"quote", "a \"b\"\n"}};
  p.status = PointStatus::ok;
  return p;
}

std::vector<SampleRecord> samples(int reps, int steps) {
  std::vector<SampleRecord> out;
  for (int r = 0; r < reps; ++r) {
    for (int s = 0; s < steps; ++s)
      out.push_back({r, 0, s, 1000 + r * 100 + s, s % 2 ? kNoValue : 7, kNoValue});
  }
  return out;
}

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void sqlite(const std::string& path, const std::string& statements) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

std::string openError(const std::string& path, Store::Mode mode) {
  try {
    Store::open(path, mode);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(opened)";
}

}  // namespace

TEST_CASE("a run, its points, repetitions and samples come back as stored", "[harness]") {
  TempDir dir;
  const std::string path = dir.file("sub/dir/synk.db");  // parents are created
  int64_t run_id = 0, point_id = 0;
  {
    Store store = Store::open(path, Store::Mode::Write);
    CHECK(store.schemaVersion() == schema::latestVersion());
    RunRecord run = sampleRun();
    store.beginRun(run);
    run_id = run.id;
    PointRecord p = samplePoint(run.id, 0);
    std::vector<SampleRecord> shuffled = samples(2, 4);
    std::swap(shuffled.front(), shuffled.back());  // stored in (repetition, rank, step) order
    RepetitionRecord second{1, 6000, 4, PointStatus::ok, ""};
    second.other_cpu = 0.75;
    GpuReading gpu;
    gpu.gpu = 1;
    gpu.seconds = 0.5;
    gpu.sm_mhz = 1980;
    gpu.power_w = 412.5;
    gpu.energy_j = 206.25;
    gpu.throttle_reasons = 0x4;  // software power cap
    second.gpus = {gpu};
    store.addPoint(p, {{0, 5000, 4, PointStatus::ok, ""}, second}, shuffled);
    point_id = p.id;
    PointRecord skipped = samplePoint(run.id, 1);
    skipped.status = PointStatus::skipped;
    skipped.reason = "needs 8 GPUs";
    store.addPoint(skipped, {}, {});
    store.endRun(run.id, "complete");
  }
  const Store store = Store::open(path, Store::Mode::Read);
  const auto run = store.run(run_id);
  REQUIRE(run);
  CHECK(run->status == "complete");
  CHECK_FALSE(run->ended_at.empty());
  CHECK(run->gpu_count == 2);
  CHECK(run->env.at("NCCL_DEBUG") == "INFO");
  CHECK(store.runs().size() == 1);
  const auto points = store.points(run_id);
  REQUIRE(points.size() == 2);
  CHECK(points[0].axes == samplePoint(run_id, 0).axes);  // quotes and newlines survive JSON
  CHECK(points[1].reason == "needs 8 GPUs");
  const auto reps = store.repetitions(point_id);
  REQUIRE(reps.size() == 2);
  CHECK(reps[1].startup_ns == 6000);
  CHECK_FALSE(reps[0].other_cpu);
  CHECK(reps[1].other_cpu == 0.75);
  CHECK(reps[0].gpus.empty());
  REQUIRE(reps[1].gpus.size() == 1);
  CHECK(reps[1].gpus[0].gpu == 1);
  CHECK(reps[1].gpus[0].energy_j == 206.25);
  CHECK(reps[1].gpus[0].sm_mhz == 1980);
  CHECK_FALSE(reps[1].gpus[0].memory_mhz);
  CHECK(reps[1].gpus[0].throttled());
  const auto got = store.samples(point_id);
  const auto want = samples(2, 4);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].ns == want[i].ns);
    CHECK(got[i].compute_ns == want[i].compute_ns);
    CHECK(got[i].collective_ns == kNoValue);
  }
  CHECK(store.pointsWithKey("key0").size() == 1);
  CHECK_FALSE(store.run(99));
}

TEST_CASE("rank times come back as stored, past one statement's rows", "[harness]") {
  TempDir dir;
  const std::string path = dir.file("ranks.db");
  // 2 repetitions x 75 steps x 2 ranks: 300 rows, two full statements and a shorter one.
  std::vector<RankTimesRecord> times;
  for (int32_t r = 0; r < 2; ++r) {
    for (int32_t step = 0; step < 75; ++step) {
      for (int32_t rank = 0; rank < 2; ++rank) {
        const int64_t base = 1'000'000 * (r + 1) + 1000 * step + rank;
        // Rank 1 runs on the CPU (no device time: NULL in the store, -1 read back).
        times.push_back(
            {r, step, rank, base, rank == 1 ? -1 : base + 7, base + 11, base + 13, base + 17});
      }
    }
  }
  int64_t point_id = 0;
  {
    Store store = Store::open(path, Store::Mode::Write);
    RunRecord run = sampleRun();
    store.beginRun(run);
    PointRecord p = samplePoint(run.id, 0);
    store.addPoint(p, {{0, 1, 75, PointStatus::ok, ""}}, samples(2, 75), times);
    point_id = p.id;
    store.endRun(run.id, "complete");
  }
  const Store store = Store::open(path, Store::Mode::Read);
  const std::vector<RankTimesRecord> back = store.rankTimes(point_id);
  REQUIRE(back.size() == times.size());
  for (size_t i = 0; i < times.size(); ++i) {
    INFO("row " << i);
    const RankTimesRecord &a = times[i], &b = back[i];
    CHECK(std::tie(a.repetition, a.step, a.rank, a.work_ns, a.device_ns, a.path_ns, a.wait_ns,
                   a.step_ns) == std::tie(b.repetition, b.step, b.rank, b.work_ns, b.device_ns,
                                          b.path_ns, b.wait_ns, b.step_ns));
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* count = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM rank_times WHERE device_ns IS NULL", -1,
                             &count, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(count) == SQLITE_ROW);
  CHECK(sqlite3_column_int64(count, 0) == 150);
  sqlite3_finalize(count);
  sqlite3_close(db);
}

TEST_CASE("a version-1 database is migrated forward with its rows", "[harness]") {
  TempDir dir;
  const std::string path = dir.file("old.db");
  sqlite(path,
         "PRAGMA application_id = " + std::to_string(schema::kApplicationId) + ";" +
             schema::kMigrations[0] + "; PRAGMA user_version = 1;" +
             "INSERT INTO run (id, experiment, kind, config_text, config_resolved, "
             "command_line, machine_key, started_at, status) VALUES (1, 'old', 'train', '', "
             "'', 'synk-bench run old.ini', 'm', '2025-01-01T00:00:00Z', 'complete');"
             "INSERT INTO point (id, run_id, seq, key, axes, status, first_sample, sample_count) "
             "VALUES (1, 1, 0, 'k', '{\"ranks\":\"1\"}', 'ok', 1, 1);"
             "INSERT INTO sample (point_id, repetition, rank, step, ns) VALUES (1, 0, 0, 0, 42);");
  const Store store = Store::open(path, Store::Mode::Read);  // a reader migrates a writable file
  CHECK(store.schemaVersion() == schema::latestVersion());
  CHECK(store.run(1)->experiment == "old");
  CHECK(store.run(1)->telemetry.empty());  // the column version 4 added
  const auto s = store.samples(1);
  REQUIRE(s.size() == 1);
  CHECK(s[0].ns == 42);
  CHECK(s[0].compute_ns == kNoValue);  // the column version 2 added
  CHECK(store.repetitions(1).empty());
  CHECK(store.baselines().empty());  // the table version 3 added
}

TEST_CASE("repetition values and baselines round-trip (schema version 3)", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("v3.db"), Store::Mode::Write);
  RunRecord run = sampleRun();
  store.beginRun(run);
  PointRecord p = samplePoint(run.id, 0);
  RepetitionRecord measured, plain;
  measured.repetition = 0;
  measured.value = 1.25e-7;  // 125 ns: more precision than whole-nanosecond samples hold
  plain.repetition = 1;
  store.addPoint(p, {measured, plain}, samples(2, 1));
  const auto reps = store.repetitions(p.id);
  REQUIRE(reps.size() == 2);
  CHECK(reps[0].value == 1.25e-7);
  CHECK_FALSE(reps[1].value);
  CHECK_FALSE(store.baseline("nightly"));
  store.setBaseline("nightly", run.id);
  CHECK(store.baseline("nightly") == run.id);
  RunRecord second = sampleRun();
  store.beginRun(second);
  store.setBaseline("nightly", second.id);  // naming again moves it
  CHECK(store.baseline("nightly") == second.id);
  CHECK(store.baselines() == std::map<std::string, int64_t>{{"nightly", second.id}});
  CHECK_THROWS_AS(store.setBaseline("other", 99), BadInput);
}

TEST_CASE("a launched point's nodes, ranks per node and hosts round-trip (schema 6)", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("v6.db"), Store::Mode::Write);
  RunRecord run = sampleRun();
  store.beginRun(run);
  PointRecord launched = samplePoint(run.id, 0), forked = samplePoint(run.id, 1);
  launched.nodes = 2;
  launched.ranks_per_node = 1;
  launched.hosts = "node-a,node-b";
  RepetitionRecord rep;
  rep.hosts = "node-a,node-b";
  store.addPoint(launched, {rep}, samples(1, 2));
  store.addPoint(forked, {RepetitionRecord{}}, samples(1, 2));
  const std::vector<PointRecord> back = store.points(run.id);
  REQUIRE(back.size() == 2);
  CHECK(back[0].nodes == 2);
  CHECK(back[0].ranks_per_node == 1);
  CHECK(back[0].hosts == "node-a,node-b");
  CHECK(store.repetitions(back[0].id).at(0).hosts == "node-a,node-b");
  CHECK(back[1].nodes == 0);  // stored as NULL: forked on the run's host
  CHECK(back[1].hosts.empty());
  CHECK(store.repetitions(back[1].id).at(0).hosts.empty());
}

TEST_CASE("refused untouched: a newer schema, a foreign database, not a database", "[harness]") {
  TempDir dir;
  SECTION("a database from a newer synk-bench") {
    const std::string path = dir.file("new.db");
    { Store::open(path, Store::Mode::Write); }
    sqlite(path, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;");
    const std::string before = bytesOf(path);
    CHECK_THAT(openError(path, Store::Mode::Write),
               Catch::Contains("written by a newer synk-bench (schema version 99; this one "
                               "knows up to " +
                               std::to_string(schema::latestVersion()) + ")"));
    CHECK_THAT(openError(path, Store::Mode::Read), Catch::Contains("refusing to touch it"));
    CHECK(bytesOf(path) == before);
  }
  SECTION("another program's SQLite database") {
    const std::string path = dir.file("other.db");
    sqlite(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    const std::string before = bytesOf(path);
    CHECK_THAT(openError(path, Store::Mode::Write),
               Catch::Contains("is not a synk-bench database"));
    CHECK(bytesOf(path) == before);
  }
  SECTION("a text file") {
    const std::string path = dir.file("notes.txt");
    std::ofstream(path) << "these are not the results you are looking for\n";
    const std::string before = bytesOf(path);
    CHECK_THAT(openError(path, Store::Mode::Write), Catch::Contains("is not an SQLite database"));
    CHECK(bytesOf(path) == before);
  }
  SECTION("no database to read") {
    CHECK_THAT(openError(dir.file("missing.db"), Store::Mode::Read),
               Catch::Contains("no database at"));
    CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
  }
  SECTION("a read-only file") {
    if (geteuid() == 0) {
      WARN("running as root: file permissions do not stop root, nothing to check");
      return;
    }
    const std::string path = dir.file("ro.db");
    { Store::open(path, Store::Mode::Write); }
    std::filesystem::permissions(path, std::filesystem::perms::owner_read);
    CHECK_THAT(openError(path, Store::Mode::Write), Catch::Contains("read-only"));
  }
}

TEST_CASE("two processes writing one database at once keep every row", "[harness]") {
  TempDir dir;
  const std::string path = dir.file("shared.db");
  { Store::open(path, Store::Mode::Write); }
  constexpr int kWriters = 2, kPoints = 40, kSteps = 500;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        Store store = Store::open(path, Store::Mode::Write);
        RunRecord run = sampleRun();
        store.beginRun(run);
        for (int i = 0; i < kPoints; ++i) {
          PointRecord p = samplePoint(run.id, i);
          store.addPoint(p, {{0, 1, kSteps, PointStatus::ok, ""}}, samples(1, kSteps));
        }
        store.endRun(run.id, "complete");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        code = 1;
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const Store store = Store::open(path, Store::Mode::Read);
  const auto runs = store.runs();
  REQUIRE(runs.size() == kWriters);
  for (const RunRecord& r : runs) {
    CHECK(r.status == "complete");
    const auto points = store.points(r.id);
    REQUIRE(points.size() == kPoints);
    for (const PointRecord& p : points)
      CHECK(store.samples(p.id).size() == kSteps);
  }
}
