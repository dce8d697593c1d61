#pragma once
// GPU clocks, power, energy, temperature and throttling per repetition, from NVML, which comes
// with the driver: libnvidia-ml.so.1 is loaded with dlopen at run time (never linked, and its
// header is not needed: the few types are declared in gpu_telemetry.cc from NVML's reference),
// so a machine without it builds and runs; there the telemetry is absent and says why.
//
// Where it runs. NVML creates no CUDA context, but it opens the driver's devices and keeps
// state that a fork would copy; the sweeping process forks every repetition, so it never loads
// NVML. The repetition's process, the session's master, loads it after the session has forked
// its ranks (it forks no more), reads every GPU the point uses at the start and at the end of
// the timed phase, and unloads it. Two reads per point and repetition, outside the timed
// steps: a step's time is not touched. NVML's reads are slow (2 x H200, driver 580: nvmlInit
// 8 ms, the energy counter 2.9 ms a GPU, the two violation counters 1.4 ms; clocks,
// temperature and reasons well under a microsecond), so a training repetition loads NVML on a
// thread of its own during the warm-up steps (timeStepsWithTelemetry, runner.h), but takes the
// reads themselves at the timed phase's edges, after the last warm-up step and after the last
// timed step: the window is the timed steps and, at each edge, the part of the reads that
// follows (start) or precedes (end) a GPU's energy read, a few idle milliseconds; neither the
// warm-up nor the correctness check. Its energy per step is the power over that window times
// the repetition's median step. The reads lengthen a repetition by their own time (2 x H200:
// 22.6 ms median for both, results/device/2026-11-26-h200x2-gpu-check-46a38ee.md), no step.
//
// Per GPU over the phase: the energy counter's difference (nvmlDeviceGetTotalEnergyConsumption,
// mJ; Volta and later) and power = energy / seconds (the mean of two power readings where there
// is no counter); SM and memory clocks and temperature read at the end; throttle reasons
// (nvmlDeviceGetCurrentClocksEventReasons, or the older ...ThrottleReasons) OR-ed over both ends;
// the time throttled by power or heat (nvmlDeviceGetViolationStatus counters' difference). A
// repetition that throttled is flagged (GpuReading::throttled) and can be left out of the
// statistics (--exclude-throttled).
//
// GPUs are CUDA ordinals mapped to NVML devices through CUDA_VISIBLE_DEVICES (indices, or
// GPU-UUIDs); without it ordinal i is NVML index i, which holds when CUDA enumerates in PCI
// order (CUDA_DEVICE_ORDER=PCI_BUS_ID makes sure; NVML always does).
//
// SYNK_NVML_LIBRARY names another library to load instead: the tests' fake NVML
// (tests/harness/fake_nvml.cc). It is recorded with the run's environment like every SYNK_
// variable.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "synk/harness/records/records.h"

namespace synk::harness {

// In a list of ordinals: every GPU NVML sees, in its order (experiment.gpu_telemetry = all).
inline constexpr int kAllGpus = -1;

class GpuTelemetry {
 public:
  // Loads NVML and finds the devices of `ordinals` (CUDA ordinals, or {kAllGpus}). Never
  // throws: without NVML, or with a device it cannot find, available() is false and status()
  // says why.
  static GpuTelemetry open(const std::vector<int>& ordinals);
  GpuTelemetry(GpuTelemetry&&) noexcept;
  GpuTelemetry& operator=(GpuTelemetry&&) noexcept;
  ~GpuTelemetry();  // nvmlShutdown, dlclose

  bool available() const;
  // "nvml 580.65.06", or "no NVML: libnvidia-ml.so.1: cannot open shared object file ...".
  const std::string& status() const { return status_; }

  // The raw counters of every GPU at one moment.
  struct Mark {
    std::chrono::steady_clock::time_point at;
    struct Gpu {
      std::chrono::steady_clock::time_point energy_at;  // halfway through the energy read
      bool energy = false, power = false, violations = false;
      unsigned long long energy_mj = 0, reasons = 0, power_ns = 0, thermal_ns = 0;
      unsigned int power_mw = 0;
    };
    std::vector<Gpu> gpus;
  };
  Mark mark() const;
  // One reading per GPU over the span between two marks (clocks and temperature read now).
  std::vector<GpuReading> between(const Mark& start, const Mark& end) const;
  // Reads again and returns one reading per GPU over the span since `start`.
  std::vector<GpuReading> since(const Mark& start) const { return between(start, mark()); }

 private:
  struct Library;
  GpuTelemetry() = default;
  std::unique_ptr<Library> nvml_;
  std::string status_;
};

// Without loading it in this process: whether NVML loads and initialises, in a child process
// (this one forks later). "nvml 580.65.06" or "no NVML: why".
std::string probeGpuTelemetry();

// The CUDA ordinals a point uses: cuda and nccl one per rank, host staging min(ranks, gpus);
// none on the cpu backend; with experiment.gpu_telemetry = all {kAllGpus} (every GPU NVML sees,
// whatever the backend), none with `none`.
std::vector<int> telemetryGpus(const std::string& backend, int ranks, int gpus,
                               const std::string& mode);

}  // namespace synk::harness
