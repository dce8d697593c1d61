#pragma once
// What a run stores, as plain structs: a run with its context, its points, each point's
// repetitions (with the GPUs' telemetry) and samples. The store (store.h) writes and reads them;
// the runner, the sweep and the analysis build and read them without knowing the store.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace synk::harness {

// A point's (and a repetition's) status. Stored as its text (toString: the SQLite column, the
// JSON export and the console print exactly these words); text is parsed once where it comes in
// (the store, the repetition's report pipe) and compared as the enum everywhere else.
//   ok, wrong (the correctness check failed), failed, skipped (the plan's reason says why),
//   interrupted (a repetition cut short by Ctrl-C: never stored, the point is dropped).
enum class PointStatus { ok, wrong, failed, skipped, interrupted };

std::string toString(PointStatus status);
// The status named by `text`, or nullopt where it names none.
std::optional<PointStatus> parsePointStatus(std::string_view text);
// "failed: rank 1 died", or the status's word alone where there is no reason.
std::string statusText(PointStatus status, const std::string& reason);
// "ok, wrong, failed, skipped, interrupted": for an error naming the valid ones.
std::string pointStatusNames();

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

// A planned point of a run and how it went (status: PointStatus above).
struct PointRecord {
  int64_t id = 0;
  int64_t run_id = 0;
  int seq = 0;  // position in the run's plan
  std::string key;
  std::map<std::string, std::string> axes;
  PointStatus status = PointStatus::ok;
  std::string reason;
  int64_t wrong = 0;  // like nccl-tests' #wrong: wrong elements, or ranks whose check differed
  std::string started_at, ended_at;
  // A point run through experiment.launch: its nodes, ranks per node and the nodes' hosts in
  // node order ("a,b"; repetitions placed differently: "a,b; a,c"). 0, 0, "": a forked point.
  int nodes = 0;
  int ranks_per_node = 0;
  std::string hosts;
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
  PointStatus status = PointStatus::ok;
  std::string message;
  // Seconds: the repetition's own measurement, where the program that took it summarised it
  // (an imported Google Benchmark repetition: real time per iteration). Unset for synk-bench's
  // sessions, whose value is the median of their samples.
  std::optional<double> value;
  // CPUs other processes kept busy while it ran (mean over its wall time), where measured.
  std::optional<double> other_cpu;
  std::vector<GpuReading> gpus;  // every GPU the point used, where NVML could read them
  std::string hosts;             // launched: the nodes' hosts in node order ("a,b")
};

inline constexpr int64_t kNoValue = -1;

// A record's nanoseconds as seconds, what every summary reports.
inline double nanosToSeconds(int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

// One rank's time in one timed step of a training point, by what it spent it on
// (Session::lastStepTimes, experiment.step_times), in nanoseconds.
struct RankTimesRecord {
  int32_t repetition = 0;
  int32_t step = 0;
  int32_t rank = 0;
  int64_t work_ns = 0;     // the model's function on this rank (its plugin, issuing on a GPU)
  int64_t device_ns = -1;  // that function's work on the GPU (-1: cpu ranks)
  int64_t path_ns = 0;     // the runtime's own: the step beyond the longer of work and device,
                           // and the waits
  int64_t wait_ns = 0;     // waiting for the other ranks (the agreement, the step's barriers)
  int64_t step_ns = 0;     // the step on this rank, whole
};

struct SampleRecord {
  int32_t repetition = 0;
  int32_t rank = 0;  // the rank that timed it (the master's clock for whole steps)
  int32_t step = 0;
  int64_t ns = 0;
  int64_t compute_ns = kNoValue;     // time in function calls, where the step separates it
  int64_t collective_ns = kNoValue;  // time in collectives, likewise
};

}  // namespace synk::harness
