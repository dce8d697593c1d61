#pragma once
// The result store: one SQLite file (results/synk.db by default) holding every run, point and
// sample. This header is the only interface to it; the SQL lives in store*.cc.
//
//   run          one per `synk-bench run` / `collectives`: the context, stored once (commit and
//                dirty flag, host, CPU, memory, GPUs, driver/CUDA/NCCL versions, build type, the
//                config file's text, the resolved config, the command line), start, end, status
//   run_env      the environment variables that steer synk, CUDA and NCCL at the time
//   point        one per axis tuple: axis values, comparability key, status, reason, #wrong
//   repetition   one per repetition (a fresh session) of a point: its start-up cost, its status
//   baseline     a name for a run (`synk-bench baseline NAME RUN`), which `compare` accepts
//   repetition_gpu  per repetition and GPU used: clocks, power, energy, temperature, throttling
//   sample       one per timed step per rank that timed it: nanoseconds, and where the step
//                separates them, the compute and collective parts. A point's samples are one
//                contiguous range of rows (point.first_sample, point.sample_count); the table has
//                no index on point_id (appending stays cheap), so SQL that selects by point_id
//                scans: use that range, or Store::samples
//
// Concurrency and durability: WAL, busy timeout, synchronous=NORMAL; a point with its
// repetitions and samples is one transaction, so a killed run leaves whole points only. The
// schema version is PRAGMA user_version: older files are migrated forward (store_schema.cc),
// a file from a newer synk-bench is refused untouched, and a file that is not a synk database
// (no application_id 'synk') is refused too.
//
// Reading for regression checks: pointsWithKey(key) gives every stored measurement of one
// comparable point across runs; samples(point) its raw data; the repetition is the unit of
// independence (steps inside one session are correlated).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/records/records.h"

struct sqlite3;

namespace synk::harness {

inline constexpr const char* kDefaultDatabase = "results/synk.db";

class Store {
 public:
  enum class Mode {
    Write,  // create if missing, migrate if older
    Read,   // must exist; migrated only if older and writable
  };
  // Throws BadInput: not a database, not a synk database, a newer schema, unwritable (Write).
  static Store open(const std::string& path, Mode mode);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  const std::string& path() const { return path_; }
  int schemaVersion() const;

  // Inserts the run (status running) and sets run.id.
  void beginRun(RunRecord& run);
  void endRun(int64_t run_id, const std::string& status, const std::string& message = {});
  // One transaction: the point, its repetitions, its samples and its ranks' step times. Sets
  // point.id.
  void addPoint(PointRecord& point, const std::vector<RepetitionRecord>& repetitions,
                const std::vector<SampleRecord>& samples,
                const std::vector<RankTimesRecord>& rank_times = {});

  std::vector<RunRecord> runs() const;                    // newest first, without env
  std::optional<RunRecord> run(int64_t id) const;         // with env
  std::vector<PointRecord> points(int64_t run_id) const;  // in plan order
  // Every point with this comparability key, oldest run first.
  std::vector<PointRecord> pointsWithKey(const std::string& key) const;
  std::vector<RepetitionRecord> repetitions(int64_t point_id) const;
  // By repetition, rank, step.
  std::vector<SampleRecord> samples(int64_t point_id) const;
  // By repetition, step, rank; empty for points recorded without step times.
  std::vector<RankTimesRecord> rankTimes(int64_t point_id) const;

  // Baselines: a name for a run, for `compare`. Naming an existing baseline moves it (the old
  // run stays). Throws BadInput for a run that does not exist.
  void setBaseline(const std::string& name, int64_t run_id);
  std::optional<int64_t> baseline(const std::string& name) const;
  std::map<std::string, int64_t> baselines() const;

 private:
  Store(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace synk::harness
