#include "synk/harness/store/store_schema.h"

#include <sqlite3.h>

#include "synk/harness/store/store_sql.h"

namespace synk::harness::schema {

const std::vector<std::string> kMigrations = {
    // 1: runs with their context, points with their comparability key, one sample per step.
    //    A point's samples are the rows first_sample .. first_sample + sample_count - 1 of
    //    `sample` (written in one transaction, so contiguous): read by rowid range, with no index
    //    and no foreign-key check to maintain per row, which halves the cost of storing them.
    R"sql(
      CREATE TABLE run (
        id INTEGER PRIMARY KEY,
        experiment TEXT NOT NULL, kind TEXT NOT NULL, tag TEXT,
        config_file TEXT, config_text TEXT NOT NULL, config_resolved TEXT NOT NULL,
        command_line TEXT NOT NULL,
        commit_hash TEXT, dirty INTEGER NOT NULL DEFAULT 0, build_type TEXT,
        host TEXT, cpu_model TEXT, cpu_cores INTEGER, memory_bytes INTEGER,
        gpu_model TEXT, gpu_count INTEGER, gpu_topology TEXT,
        driver_version TEXT, cuda_version TEXT, nccl_version TEXT,
        machine_key TEXT NOT NULL,
        started_at TEXT NOT NULL, ended_at TEXT,
        status TEXT NOT NULL, message TEXT,
        process_id INTEGER, boot_id TEXT, process_start INTEGER);
      CREATE TABLE point (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES run(id),
        seq INTEGER NOT NULL,
        key TEXT NOT NULL,
        axes TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT,
        wrong INTEGER NOT NULL DEFAULT 0,
        started_at TEXT, ended_at TEXT,
        first_sample INTEGER, sample_count INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX point_by_run ON point(run_id, seq);
      CREATE INDEX point_by_key ON point(key);
      CREATE TABLE sample (
        point_id INTEGER NOT NULL,
        repetition INTEGER NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL,
        ns INTEGER NOT NULL);
    )sql",
    // 2: each repetition's session start-up cost and status; steps split into compute and
    //    collective time; the environment of a run.
    R"sql(
      CREATE TABLE repetition (
        point_id INTEGER NOT NULL REFERENCES point(id),
        repetition INTEGER NOT NULL,
        startup_ns INTEGER NOT NULL, steps INTEGER NOT NULL,
        status TEXT NOT NULL, message TEXT,
        PRIMARY KEY (point_id, repetition)) WITHOUT ROWID;
      ALTER TABLE sample ADD COLUMN compute_ns INTEGER;
      ALTER TABLE sample ADD COLUMN collective_ns INTEGER;
      CREATE TABLE run_env (
        run_id INTEGER NOT NULL REFERENCES run(id),
        name TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (run_id, name)) WITHOUT ROWID;
    )sql",
    // 3: regression tracking. Named baselines (`synk-bench baseline NAME RUN`); a repetition's
    //    own value where the program that measured it summarised it (an imported Google Benchmark
    //    repetition: real time per iteration, in seconds, which whole-nanosecond samples would
    //    round).
    R"sql(
      CREATE TABLE baseline (
        name TEXT PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES run(id),
        named_at TEXT NOT NULL) WITHOUT ROWID;
      ALTER TABLE repetition ADD COLUMN value REAL;
    )sql",
    // 4: the conditions a measurement ran under. Per repetition the CPUs other processes kept
    //    busy meanwhile, and per GPU it used the clocks, power, energy, temperature and throttle
    //    reasons over its timed phase (NVML); per run the machine's load when it began and what
    //    GPU telemetry there was (or why none).
    R"sql(
      ALTER TABLE repetition ADD COLUMN other_cpu REAL;
      ALTER TABLE run ADD COLUMN conditions TEXT;
      ALTER TABLE run ADD COLUMN telemetry TEXT;
      CREATE TABLE repetition_gpu (
        point_id INTEGER NOT NULL REFERENCES point(id),
        repetition INTEGER NOT NULL,
        gpu INTEGER NOT NULL,
        seconds REAL NOT NULL,
        sm_mhz REAL, memory_mhz REAL, power_w REAL, energy_j REAL, temperature_c REAL,
        throttle_reasons INTEGER NOT NULL DEFAULT 0,
        throttled_s REAL,
        PRIMARY KEY (point_id, repetition, gpu)) WITHOUT ROWID;
    )sql",
    // 5: every rank's time per timed step of a training point (experiment.step_times).
    R"sql(
      CREATE TABLE rank_times (
        point_id INTEGER NOT NULL REFERENCES point(id),
        repetition INTEGER NOT NULL,
        step INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        work_ns INTEGER NOT NULL, device_ns INTEGER, path_ns INTEGER NOT NULL,
        wait_ns INTEGER NOT NULL, step_ns INTEGER NOT NULL,
        PRIMARY KEY (point_id, repetition, step, rank)) WITHOUT ROWID;
    )sql",
    // 6: points launched over several nodes (experiment.launch): their nodes, ranks per node and
    //    the nodes' hosts, per point and per repetition (a launcher may place each differently).
    //    NULL for points forked on the sweeping machine.
    R"sql(
      ALTER TABLE point ADD COLUMN nodes INTEGER;
      ALTER TABLE point ADD COLUMN ranks_per_node INTEGER;
      ALTER TABLE point ADD COLUMN hosts TEXT;
      ALTER TABLE repetition ADD COLUMN hosts TEXT;
    )sql",
};

int latestVersion() {
  return static_cast<int>(kMigrations.size());
}

void migrate(sqlite3* db, int target) {
  sql::Transaction transaction(db);
  // Read again under the write lock: another process may have migrated meanwhile.
  int version =
      static_cast<int>(sql::queryInt(db, "PRAGMA user_version", "reading the schema version"));
  if (version == 0) {
    sql::exec(db, "PRAGMA application_id = " + std::to_string(kApplicationId),
              "marking the database");
  }
  for (; version < target; ++version) {
    sql::exec(db, kMigrations[static_cast<size_t>(version)],
              "migrating the schema to version " + std::to_string(version + 1));
  }
  sql::exec(db, "PRAGMA user_version = " + std::to_string(version), "setting the schema version");
  transaction.commit();
}

}  // namespace synk::harness::schema
