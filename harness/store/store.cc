#include "synk/harness/store/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/json.h"
#include "synk/harness/store/store_schema.h"
#include "synk/harness/store/store_sql.h"

namespace synk::harness {
namespace {

// Long enough for another writer to commit a point of a million samples.
constexpr int kBusyTimeoutMs = 30000;

void closeQuietly(sqlite3* db) {
  if (db) sqlite3_close_v2(db);
}

// Refuses files that are not synk databases or are too new, before anything is written. One
// statement, so one snapshot: read apart, a writer creating the schema between the reads would
// show tables without its application_id (seen as two runs creating one database at once).
void checkIdentity(sqlite3* db, const std::string& path, int& version) {
  int64_t app = 0, tables = 0;
  try {
    sql::Statement identity(db,
                            "SELECT (SELECT application_id FROM pragma_application_id), "
                            "(SELECT user_version FROM pragma_user_version), "
                            "(SELECT count(*) FROM sqlite_master)");
    identity.step();
    app = identity.integer(0);
    version = static_cast<int>(identity.integer(1));
    tables = identity.integer(2);
  } catch (const std::exception& e) {
    throw BadInput(path + " is not an SQLite database (" + e.what() + ")");
  }
  if (app == 0 && tables == 0 && version == 0) return;  // empty: a new database
  if (app != schema::kApplicationId) {
    throw BadInput(path + " is not a synk-bench database (application_id " + std::to_string(app) +
                   ", " + std::to_string(tables) + " schema objects); refusing to touch it");
  }
  if (version > schema::latestVersion()) {
    throw BadInput(path + " was written by a newer synk-bench (schema version " +
                   std::to_string(version) + "; this one knows up to " +
                   std::to_string(schema::latestVersion()) + "); refusing to touch it");
  }
}

}  // namespace

Store Store::open(const std::string& path, Mode mode) {
  const bool exists = std::filesystem::exists(path);
  if (mode == Mode::Read && !exists) {
    throw BadInput("no database at " + path + " (synk-bench run creates it; --db names another)");
  }
  if (!exists) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) std::filesystem::create_directories(parent, error);
    if (error) throw BadInput("cannot create " + parent.string() + ": " + error.message());
  }
  sqlite3* db = nullptr;
  const int flags =
      (mode == Mode::Write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READWRITE) |
      SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc == SQLITE_CANTOPEN && mode == Mode::Read) {
    closeQuietly(db);
    db = nullptr;
    rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  }
  if (rc != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    closeQuietly(db);
    throw BadInput("cannot open " + path + ": " + why);
  }
  Store store(path, db);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  int version = 0;
  checkIdentity(db, path, version);
  const bool read_only = sqlite3_db_readonly(db, "main") == 1 || access(path.c_str(), W_OK) != 0;
  if (mode == Mode::Write && read_only) {
    throw BadInput("cannot write " + path + ": the file is read-only");
  }
  if (mode == Mode::Read && version == 0) {
    // An empty file: a reader never creates the schema (a writer may be creating it right now,
    // and two creators race).
    throw BadInput(path + " holds no synk-bench data yet (an empty database)");
  }
  if (version == 0 && !read_only) {
    // A new file: larger pages make the long runs of sample rows cheaper to append. Only a
    // database without tables takes a new page size.
    sql::exec(db, "PRAGMA page_size = 16384", "setting the page size");
  }
  if (version < schema::latestVersion()) {
    if (read_only) {
      throw BadInput(path + " has schema version " + std::to_string(version) +
                     " and is read-only, so it cannot be migrated to version " +
                     std::to_string(schema::latestVersion()));
    }
    schema::migrate(db, schema::latestVersion());
  }
  if (!read_only) {
    // WAL lets readers run beside a writer; NORMAL syncs at checkpoints, not every commit (a
    // power cut may lose the last points, never corrupt the file).
    sql::exec(db, "PRAGMA journal_mode = WAL", "switching to WAL");
    sql::exec(db, "PRAGMA synchronous = NORMAL", "setting synchronous");
  }
  sql::exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys");
  return store;
}

Store::~Store() {
  closeQuietly(db_);
}

Store::Store(Store&& other) noexcept : path_(std::move(other.path_)), db_(other.db_) {
  other.db_ = nullptr;
}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    closeQuietly(db_);
    path_ = std::move(other.path_);
    db_ = other.db_;
    other.db_ = nullptr;
  }
  return *this;
}

int Store::schemaVersion() const {
  return static_cast<int>(sql::queryInt(db_, "PRAGMA user_version", "reading the schema version"));
}

void Store::beginRun(RunRecord& run) {
  sql::Transaction transaction(db_);
  sql::Statement insert(db_, R"sql(
      INSERT INTO run (experiment, kind, tag, config_file, config_text, config_resolved,
                       command_line, commit_hash, dirty, build_type, host, cpu_model, cpu_cores,
                       memory_bytes, gpu_model, gpu_count, gpu_topology, driver_version,
                       cuda_version, nccl_version, machine_key, started_at, status, process_id,
                       boot_id, process_start, conditions, telemetry)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
              ?19, ?20, ?21, ?22, 'running', ?23, ?24, ?25, ?26, ?27))sql");
  insert.bind(1, run.experiment).bind(2, run.kind).bind(3, run.tag).bind(4, run.config_file);
  insert.bind(5, run.config_text).bind(6, run.config_resolved).bind(7, run.command_line);
  insert.bind(8, run.commit).bind(9, int64_t{run.dirty}).bind(10, run.build_type);
  insert.bind(11, run.host).bind(12, run.cpu_model).bind(13, int64_t{run.cpu_cores});
  insert.bind(14, run.memory_bytes).bind(15, run.gpu_model).bind(16, int64_t{run.gpu_count});
  insert.bind(17, run.gpu_topology).bind(18, run.driver_version).bind(19, run.cuda_version);
  insert.bind(20, run.nccl_version).bind(21, run.machine_key).bind(22, run.started_at);
  insert.bind(23, run.process_id).bind(24, run.boot_id).bind(25, run.process_start);
  insert.bind(26, run.conditions).bind(27, run.telemetry);
  insert.step();
  run.id = sqlite3_last_insert_rowid(db_);
  run.status = "running";
  sql::Statement env(db_, "INSERT INTO run_env (run_id, name, value) VALUES (?1, ?2, ?3)");
  for (const auto& [name, value] : run.env) {
    env.bind(1, run.id).bind(2, name).bind(3, value);
    env.step();
    env.reset();
  }
  transaction.commit();
}

void Store::endRun(int64_t run_id, const std::string& status, const std::string& message) {
  sql::Statement update(db_,
                        "UPDATE run SET status = ?2, message = ?3, "
                        "ended_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?1");
  update.bind(1, run_id).bind(2, status).bind(3, message);
  update.step();
}

void Store::addPoint(PointRecord& point, const std::vector<RepetitionRecord>& repetitions,
                     const std::vector<SampleRecord>& samples,
                     const std::vector<RankTimesRecord>& rank_times) {
  auto order = [](const SampleRecord& a, const SampleRecord& b) {
    return std::tie(a.repetition, a.rank, a.step) < std::tie(b.repetition, b.rank, b.step);
  };
  std::vector<SampleRecord> sorted;
  const std::vector<SampleRecord>* rows = &samples;
  if (!std::is_sorted(samples.begin(), samples.end(), order)) {
    sorted = samples;
    std::sort(sorted.begin(), sorted.end(), order);
    rows = &sorted;
  }
  sql::Transaction transaction(db_);
  // The write lock is held: nobody else inserts samples until the commit.
  const int64_t first =
      sql::queryInt(db_, "SELECT COALESCE(MAX(rowid), 0) + 1 FROM sample", "numbering samples");
  sql::Statement insert(db_, R"sql(
      INSERT INTO point (run_id, seq, key, axes, status, reason, wrong, started_at, ended_at,
                         first_sample, sample_count, nodes, ranks_per_node, hosts)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14))sql");
  insert.bind(1, point.run_id).bind(2, int64_t{point.seq}).bind(3, point.key);
  insert.bind(4, toJson(point.axes)).bind(5, toString(point.status)).bind(6, point.reason);
  insert.bind(7, point.wrong).bind(8, point.started_at).bind(9, point.ended_at);
  insert.bind(10, first).bind(11, static_cast<int64_t>(rows->size()));
  if (point.nodes > 0) {
    insert.bind(12, int64_t{point.nodes}).bind(13, int64_t{point.ranks_per_node});
    insert.bind(14, point.hosts);
  } else {  // forked on this machine: the run's host
    insert.bindNull(12).bindNull(13).bindNull(14);
  }
  insert.step();
  point.id = sqlite3_last_insert_rowid(db_);
  sql::Statement rep(db_, R"sql(
      INSERT INTO repetition (point_id, repetition, startup_ns, steps, status, message, value,
                              other_cpu, hosts)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9))sql");
  sql::Statement gpu(db_, R"sql(
      INSERT INTO repetition_gpu (point_id, repetition, gpu, seconds, sm_mhz, memory_mhz, power_w,
                                  energy_j, temperature_c, throttle_reasons, throttled_s)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11))sql");
  auto real = [](sql::Statement& s, int at, const std::optional<double>& v) {
    if (v)
      s.bindReal(at, *v);
    else
      s.bindNull(at);
  };
  for (const RepetitionRecord& r : repetitions) {
    rep.bind(1, point.id).bind(2, int64_t{r.repetition}).bind(3, r.startup_ns);
    rep.bind(4, r.steps).bind(5, toString(r.status)).bind(6, r.message);
    real(rep, 7, r.value);
    real(rep, 8, r.other_cpu);
    if (r.hosts.empty())
      rep.bindNull(9);
    else
      rep.bind(9, r.hosts);
    rep.step();
    rep.reset();
    for (const GpuReading& g : r.gpus) {
      gpu.bind(1, point.id).bind(2, int64_t{r.repetition}).bind(3, int64_t{g.gpu});
      gpu.bindReal(4, g.seconds);
      real(gpu, 5, g.sm_mhz);
      real(gpu, 6, g.memory_mhz);
      real(gpu, 7, g.power_w);
      real(gpu, 8, g.energy_j);
      real(gpu, 9, g.temperature_c);
      gpu.bind(10, static_cast<int64_t>(g.throttle_reasons));
      real(gpu, 11, g.throttled_s);
      gpu.step();
      gpu.reset();
    }
  }
  // A point whose steps are not split writes NULL parts in the statement instead of binding
  // them.
  const bool split = std::any_of(rows->begin(), rows->end(), [](const SampleRecord& s) {
    return s.compute_ns != kNoValue || s.collective_ns != kNoValue;
  });
  auto nullable = [](sql::Statement& s, int at, int64_t v, bool present) {
    if (present)
      s.bind(at, v);
    else
      s.bindNull(at);
  };
  sql::insertRows(db_,
                  "INSERT INTO sample (rowid, point_id, repetition, rank, step, ns, compute_ns, "
                  "collective_ns) VALUES ",
                  split ? "(?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,NULL,NULL)", split ? 8 : 6,
                  rows->size(), [&](sql::Statement& insert, size_t i, int at) {
                    const SampleRecord& s = (*rows)[i];
                    insert.bind(at + 1, first + static_cast<int64_t>(i)).bind(at + 2, point.id);
                    insert.bind(at + 3, int64_t{s.repetition}).bind(at + 4, int64_t{s.rank});
                    insert.bind(at + 5, int64_t{s.step}).bind(at + 6, s.ns);
                    if (!split) return;
                    nullable(insert, at + 7, s.compute_ns, s.compute_ns != kNoValue);
                    nullable(insert, at + 8, s.collective_ns, s.collective_ns != kNoValue);
                  });
  sql::insertRows(
      db_,
      "INSERT INTO rank_times (point_id, repetition, step, rank, work_ns, device_ns, path_ns, "
      "wait_ns, step_ns) VALUES ",
      "(?,?,?,?,?,?,?,?,?)", 9, rank_times.size(), [&](sql::Statement& insert, size_t i, int at) {
        const RankTimesRecord& t = rank_times[i];
        insert.bind(at + 1, point.id).bind(at + 2, int64_t{t.repetition});
        insert.bind(at + 3, int64_t{t.step}).bind(at + 4, int64_t{t.rank});
        insert.bind(at + 5, t.work_ns);
        nullable(insert, at + 6, t.device_ns, t.device_ns >= 0);  // -1: cpu ranks
        insert.bind(at + 7, t.path_ns).bind(at + 8, t.wait_ns).bind(at + 9, t.step_ns);
      });
  transaction.commit();
}

void Store::setBaseline(const std::string& name, int64_t run_id) {
  if (!run(run_id)) throw BadInput("no run " + std::to_string(run_id) + " in " + path_);
  sql::Statement upsert(db_,
                        "INSERT INTO baseline (name, run_id, named_at) VALUES "
                        "(?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) ON CONFLICT(name) DO "
                        "UPDATE SET run_id = excluded.run_id, named_at = excluded.named_at");
  upsert.bind(1, name).bind(2, run_id);
  upsert.step();
}

}  // namespace synk::harness
