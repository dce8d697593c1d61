// A stand-in for NVML (libnvidia-ml.so.1) exporting the functions synk-bench's GPU telemetry
// calls (harness/gpu_telemetry.cc), so CI without a GPU tests the path where NVML is present:
// energy and clocks per repetition, the throttle flag. Loaded through SYNK_NVML_LIBRARY.
// Steered by the environment:
//   FAKE_NVML_GPUS         devices (default 2)
//   FAKE_NVML_MJ_PER_READ  the energy counter grows by this much per read (default 500 mJ),
//                          so a repetition (two reads) costs exactly that per GPU
//   FAKE_NVML_THROTTLE     clocks-event reasons every read reports (default 0; 0x4: power cap)
//   FAKE_NVML_FAIL_INIT    nvmlInit_v2 fails as without a driver (NVML_ERROR_DRIVER_NOT_LOADED)
// Beside NVML's functions, two of its own for a test that dlopens it too (the same handle as the
// telemetry's): fakeNvmlWork(mJ) adds energy every device's counter reports, as work on the
// GPUs would, and fakeNvmlEnergyReads() counts the energy counter's reads so far.
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

struct Device {
  unsigned long long energy_mj = 1'000'000;
};
Device g_devices[64];
bool g_initialised = false;
// Atomic: the test's steps and the telemetry's reads may run on different threads.
std::atomic<unsigned long long> g_work_mj{0}, g_energy_reads{0};

unsigned envNumber(const char* name, unsigned fallback) {
  const char* text = std::getenv(name);
  return text && *text ? static_cast<unsigned>(std::strtoul(text, nullptr, 0)) : fallback;
}

unsigned deviceCount() {
  const unsigned n = envNumber("FAKE_NVML_GPUS", 2);
  return n > 64 ? 64 : n;
}

Device* device(void* handle) {
  return static_cast<Device*>(handle);
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  if (envNumber("FAKE_NVML_FAIL_INIT", 0) != 0) return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  g_initialised = true;
  return 0;
}

int nvmlShutdown() {
  g_initialised = false;
  return 0;
}

const char* nvmlErrorString(int result) {
  return result == 9 ? "Driver Not Loaded" : result == 0 ? "Success" : "Unknown Error";
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::strncpy(version, "999.99 (fake)", length);
  return 0;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!g_initialised) return 1;  // NVML_ERROR_UNINITIALIZED
  *count = deviceCount();
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  if (!g_initialised) return 1;
  if (index >= deviceCount()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *handle = &g_devices[index];
  return 0;
}

int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : 2619;  // SM, memory
  return 0;
}

int nvmlDeviceGetPowerUsage(void*, unsigned* milliwatts) {
  *milliwatts = 300'000;
  return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void* handle, unsigned long long* millijoules) {
  device(handle)->energy_mj += envNumber("FAKE_NVML_MJ_PER_READ", 500);
  *millijoules = device(handle)->energy_mj + g_work_mj;
  ++g_energy_reads;
  return 0;
}

int nvmlDeviceGetTemperature(void*, int, unsigned* celsius) {
  *celsius = 61;
  return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void*, unsigned long long* reasons) {
  *reasons = envNumber("FAKE_NVML_THROTTLE", 0);
  return 0;
}

int nvmlDeviceGetViolationStatus(void*, int, void*) {
  return 3;  // NVML_ERROR_NOT_SUPPORTED: as on GPUs that do not count it
}

void fakeNvmlWork(unsigned long long millijoules) {
  g_work_mj += millijoules;
}

unsigned long long fakeNvmlEnergyReads() {
  return g_energy_reads;
}

}  // extern "C"
