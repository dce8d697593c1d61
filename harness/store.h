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

struct sqlite3;

namespace synk::harness {

inline constexpr const char* kDefaultDatabase = "results/synk.db";

// Run status: running (or its process died: see RunRecord::process_*), complete, interrupted
// (Ctrl-C: finished points kept), failed (a point failed, or the run could not go on).
struct RunRecord {
  int64_t id = 0;
  std::string experiment, kind, tag;
  std::string config_file, config_text, config_resolved, command_line;
  std::string commit;
  bool dirty = false;
  std::string build_type, host, cpu_model;
  int cpu_cores = 0;
  int64_t memory_bytes = 0;
  std::string gpu_model;
  int gpu_count = 0;
  std::string gpu_topology, driver_version, cuda_version, nccl_version;
  std::string machine_key;
  std::string started_at, ended_at, status, message;
  // Which process wrote it (to tell a live "running" run from a killed one).
  int64_t process_id = 0;
  std::string boot_id;
  int64_t process_start = 0;  // /proc/PID/stat start time, in clock ticks after boot
  std::map<std::string, std::string> env;
  // How loaded the machine was when the run began ("load average 3.9 on 2 CPUs"), and the GPU
  // telemetry it had ("nvml 580.65.06", or why none: "no NVML: libnvidia-ml.so.1 not found").
  std::string conditions, telemetry;
};

// Point status: ok, wrong (the correctness check failed), skipped (reason says why), failed.
struct PointRecord {
  int64_t id = 0;
  int64_t run_id = 0;
  int seq = 0;  // position in the run's plan
  std::string key;
  std::map<std::string, std::string> axes;
  std::string status, reason;
  int64_t wrong = 0;  // like nccl-tests' #wrong: wrong elements, or ranks whose check differed
  std::string started_at, ended_at;
};

// One GPU's telemetry over a repetition's timed phase (NVML, gpu_telemetry.h): clocks and
// temperature read at its end, power = energy / seconds, throttle reasons seen at either end
// (NVML's clocks-event bits) and the time spent throttled by power or heat (NVML's violation
// counters; unset where the GPU does not count it).
struct GpuReading {
  int gpu = 0;  // NVML index
  double seconds = 0;
  std::optional<double> sm_mhz, memory_mhz, power_w, energy_j, temperature_c;
  uint64_t throttle_reasons = 0;
  std::optional<double> throttled_s;
  // Throttled: power capping, thermal or hardware slowdown at either end, or time counted as
  // throttled by power or heat.
  bool throttled() const;
};

struct RepetitionRecord {
  int repetition = 0;
  int64_t startup_ns = 0;  // fork, communicator, model load, distribute
  int64_t steps = 0;       // timed steps
  std::string status = "ok";
  std::string message;
  // Seconds: the repetition's own measurement, where the program that took it summarised it
  // (an imported Google Benchmark repetition: real time per iteration). Unset for synk-bench's
  // sessions, whose value is the median of their samples.
  std::optional<double> value;
  // CPUs other processes kept busy while it ran (mean over its wall time), where measured.
  std::optional<double> other_cpu;
  std::vector<GpuReading> gpus;  // every GPU the point used, where NVML could read them
};

inline constexpr int64_t kNoValue = -1;

struct SampleRecord {
  int32_t repetition = 0;
  int32_t rank = 0;  // the rank that timed it (the master's clock for whole steps)
  int32_t step = 0;
  int64_t ns = 0;
  int64_t compute_ns = kNoValue;     // time in function calls, where the step separates it
  int64_t collective_ns = kNoValue;  // time in collectives, likewise
};

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
  // One transaction: the point, its repetitions and its samples. Sets point.id.
  void addPoint(PointRecord& point, const std::vector<RepetitionRecord>& repetitions,
                const std::vector<SampleRecord>& samples);

  std::vector<RunRecord> runs() const;                    // newest first, without env
  std::optional<RunRecord> run(int64_t id) const;         // with env
  std::vector<PointRecord> points(int64_t run_id) const;  // in plan order
  // Every point with this comparability key, oldest run first.
  std::vector<PointRecord> pointsWithKey(const std::string& key) const;
  std::vector<RepetitionRecord> repetitions(int64_t point_id) const;
  // By repetition, rank, step.
  std::vector<SampleRecord> samples(int64_t point_id) const;

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
