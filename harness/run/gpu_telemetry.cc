#include "synk/harness/run/gpu_telemetry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "synk/harness/base/child.h"

namespace synk::harness {
namespace {

// The few NVML declarations used, from NVML's API reference (nvml.h of CUDA 12/13), so that no
// header is needed to build: return codes are ints (NVML_SUCCESS = 0), devices opaque pointers.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr int kClockSm = 1, kClockMem = 2;           // nvmlClockType_t
constexpr int kTemperatureGpu = 0;                   // nvmlTemperatureSensors_t
constexpr int kPolicyPower = 0, kPolicyThermal = 1;  // nvmlPerfPolicyType_t
struct ViolationTime {                               // nvmlViolationTime_t
  unsigned long long reference_us;
  unsigned long long violation_ns;
};

template <typename T>
T symbol(void* library, const char* name) {
  return reinterpret_cast<T>(dlsym(library, name));
}

}  // namespace

struct GpuTelemetry::Library {
  void* handle = nullptr;
  bool initialised = false;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*violation)(nvmlDevice_t, int, ViolationTime*) = nullptr;
  std::vector<nvmlDevice_t> devices;
  std::vector<int> indices;  // per device, for GpuReading::gpu

  std::string error(nvmlReturn_t code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return text ? text : "NVML error " + std::to_string(code);
  }
  ~Library() {
    if (initialised && shutdown) shutdown();
    if (handle) dlclose(handle);
  }
};

GpuTelemetry::GpuTelemetry(GpuTelemetry&&) noexcept = default;
GpuTelemetry& GpuTelemetry::operator=(GpuTelemetry&&) noexcept = default;
GpuTelemetry::~GpuTelemetry() = default;

bool GpuTelemetry::available() const {
  return nvml_ != nullptr;
}

GpuTelemetry GpuTelemetry::open(const std::vector<int>& ordinals) {
  GpuTelemetry t;
  const char* override_path = std::getenv("SYNK_NVML_LIBRARY");
  const std::string path = override_path && *override_path ? override_path : "libnvidia-ml.so.1";
  auto nvml = std::make_unique<Library>();
  nvml->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!nvml->handle) {
    const char* why = dlerror();
    t.status_ = "no NVML: " + std::string(why ? why : path + " not found");
    return t;
  }
  void* h = nvml->handle;
  nvml->init = symbol<decltype(nvml->init)>(h, "nvmlInit_v2");
  nvml->shutdown = symbol<decltype(nvml->shutdown)>(h, "nvmlShutdown");
  nvml->error_string = symbol<decltype(nvml->error_string)>(h, "nvmlErrorString");
  nvml->driver_version = symbol<decltype(nvml->driver_version)>(h, "nvmlSystemGetDriverVersion");
  nvml->count = symbol<decltype(nvml->count)>(h, "nvmlDeviceGetCount_v2");
  nvml->by_index = symbol<decltype(nvml->by_index)>(h, "nvmlDeviceGetHandleByIndex_v2");
  nvml->by_uuid = symbol<decltype(nvml->by_uuid)>(h, "nvmlDeviceGetHandleByUUID");
  nvml->clock = symbol<decltype(nvml->clock)>(h, "nvmlDeviceGetClockInfo");
  nvml->power = symbol<decltype(nvml->power)>(h, "nvmlDeviceGetPowerUsage");
  nvml->energy = symbol<decltype(nvml->energy)>(h, "nvmlDeviceGetTotalEnergyConsumption");
  nvml->temperature = symbol<decltype(nvml->temperature)>(h, "nvmlDeviceGetTemperature");
  nvml->reasons = symbol<decltype(nvml->reasons)>(h, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!nvml->reasons) {  // before NVML 12.2
    nvml->reasons = symbol<decltype(nvml->reasons)>(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  nvml->violation = symbol<decltype(nvml->violation)>(h, "nvmlDeviceGetViolationStatus");
  if (!nvml->init || !nvml->shutdown || !nvml->count || !nvml->by_index) {
    t.status_ = "no NVML: " + path +
                " lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or "
                "nvmlDeviceGetHandleByIndex_v2";
    return t;
  }
  if (const nvmlReturn_t r = nvml->init(); r != kSuccess) {
    t.status_ = "no NVML: nvmlInit failed: " + nvml->error(r);
    return t;
  }
  nvml->initialised = true;
  char version[96] = {};
  if (!nvml->driver_version || nvml->driver_version(version, sizeof version) != kSuccess)
    std::strcpy(version, "(driver version unknown)");
  unsigned count = 0;
  nvml->count(&count);
  // CUDA_VISIBLE_DEVICES: which NVML device each CUDA ordinal is.
  std::vector<std::string> visible;
  if (const char* list = std::getenv("CUDA_VISIBLE_DEVICES"); list && *list) {
    std::string text = list;
    for (size_t at = 0; at <= text.size();) {
      const size_t comma = std::min(text.find(',', at), text.size());
      visible.push_back(text.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::vector<int> wanted = ordinals;
  if (wanted == std::vector<int>{kAllGpus}) {
    wanted.clear();
    for (unsigned i = 0; i < count; ++i)
      wanted.push_back(static_cast<int>(i));
    visible.clear();  // NVML's own order
  }
  for (int ordinal : wanted) {
    nvmlDevice_t device = nullptr;
    int index = ordinal;
    nvmlReturn_t r = -1;
    if (ordinal < static_cast<int>(visible.size())) {
      const std::string& item = visible[static_cast<size_t>(ordinal)];
      if (item.rfind("GPU-", 0) == 0 && nvml->by_uuid) {
        r = nvml->by_uuid(item.c_str(), &device);
      } else {
        index = std::atoi(item.c_str());
      }
    }
    if (!device && index >= 0 && static_cast<unsigned>(index) < count)
      r = nvml->by_index(static_cast<unsigned>(index), &device);
    if (r != kSuccess || !device) {
      t.status_ = "no NVML device for CUDA ordinal " + std::to_string(ordinal) + " (NVML sees " +
                  std::to_string(count) + " GPU(s))";
      return t;
    }
    nvml->devices.push_back(device);
    nvml->indices.push_back(index);
  }
  t.status_ = std::string("nvml ") + version;
  t.nvml_ = std::move(nvml);
  return t;
}

GpuTelemetry::Mark GpuTelemetry::mark() const {
  Mark m;
  m.at = std::chrono::steady_clock::now();
  if (!nvml_) return m;
  for (nvmlDevice_t d : nvml_->devices) {
    Mark::Gpu g;
    const auto before = std::chrono::steady_clock::now();
    g.energy = nvml_->energy && nvml_->energy(d, &g.energy_mj) == kSuccess;
    g.energy_at = before + (std::chrono::steady_clock::now() - before) / 2;
    g.power = nvml_->power && nvml_->power(d, &g.power_mw) == kSuccess;
    if (nvml_->reasons && nvml_->reasons(d, &g.reasons) != kSuccess) g.reasons = 0;
    ViolationTime power{}, thermal{};
    g.violations = nvml_->violation && nvml_->violation(d, kPolicyPower, &power) == kSuccess &&
                   nvml_->violation(d, kPolicyThermal, &thermal) == kSuccess;
    g.power_ns = power.violation_ns;
    g.thermal_ns = thermal.violation_ns;
    m.gpus.push_back(g);
  }
  return m;
}

std::vector<GpuReading> GpuTelemetry::between(const Mark& start, const Mark& end) const {
  std::vector<GpuReading> out;
  if (!nvml_) return out;
  for (size_t i = 0; i < end.gpus.size() && i < start.gpus.size(); ++i) {
    const Mark::Gpu &a = start.gpus[i], &b = end.gpus[i];
    nvmlDevice_t d = nvml_->devices[i];
    GpuReading g;
    g.gpu = nvml_->indices[i];
    // The energy counter's own span where both ends read it (the reads of several GPUs follow
    // one another), else the marks'.
    const bool counted = a.energy && b.energy;
    const double seconds = std::chrono::duration<double>(counted ? b.energy_at - a.energy_at
                                                                 : end.at - start.at)
                               .count();
    g.seconds = seconds;
    if (a.energy && b.energy && b.energy_mj >= a.energy_mj) {
      g.energy_j = double(b.energy_mj - a.energy_mj) * 1e-3;
      if (seconds > 0) g.power_w = *g.energy_j / seconds;
    } else if (a.power && b.power) {
      g.power_w = (double(a.power_mw) + double(b.power_mw)) * 0.5e-3;
      g.energy_j = *g.power_w * seconds;
    }
    unsigned mhz = 0, celsius = 0;
    if (nvml_->clock && nvml_->clock(d, kClockSm, &mhz) == kSuccess) g.sm_mhz = mhz;
    if (nvml_->clock && nvml_->clock(d, kClockMem, &mhz) == kSuccess) g.memory_mhz = mhz;
    if (nvml_->temperature && nvml_->temperature(d, kTemperatureGpu, &celsius) == kSuccess)
      g.temperature_c = celsius;
    g.throttle_reasons = a.reasons | b.reasons;
    if (a.violations && b.violations && b.power_ns >= a.power_ns && b.thermal_ns >= a.thermal_ns)
      g.throttled_s = double((b.power_ns - a.power_ns) + (b.thermal_ns - a.thermal_ns)) * 1e-9;
    out.push_back(g);
  }
  return out;
}

std::string probeGpuTelemetry() {
  StopWord stop;
  const ChildResult child =
      runChild([](int fd) { return writeAll(fd, GpuTelemetry::open({}).status()) ? 0 : 1; }, stop,
               std::chrono::seconds(60));
  if (!child.exited || child.exit_code != 0 || child.output.empty()) {
    return "no NVML: the probe process " + child.describe();
  }
  return child.output;
}

std::vector<int> telemetryGpus(const std::string& backend, int ranks, int gpus,
                               const std::string& mode) {
  if (mode == "all") return {kAllGpus};
  std::vector<int> out;
  int used = 0;
  if (mode != "none" && backend != "cpu") {
    used = backend == "host" ? std::min(ranks, gpus) : ranks;
  }
  for (int i = 0; i < std::min(used, gpus); ++i)
    out.push_back(i);
  return out;
}

}  // namespace synk::harness
