#pragma once
// Counting GPUs in the master WITHOUT initialising CUDA in it (the master forks afterwards, and
// CUDA state does not survive fork: ../shared/notes/research-reliability.md section 3).
//
// Method, in order:
//   1. /proc/driver/nvidia/gpus/<pci bus id>/ has one entry per GPU the driver exposes to this
//      container (GPUs marked "GPU Excluded: Yes" are skipped). CUDA_VISIBLE_DEVICES is then
//      applied the way the CUDA driver does (applyCudaVisibleDevices). No library is loaded.
//   2. When that is impossible or ambiguous (no /proc entries, MIG or unresolvable UUIDs, a
//      repeated device), a throw-away forked child loads libcuda.so.1, calls cuInit and
//      cuDeviceGetCount, reports through a pipe and exits; the parent waits with a deadline.
//      CUDA is initialised in the child only.
// Device ordinals handed to ranks are CUDA's numbering inside the (forked) process, that is after
// CUDA_VISIBLE_DEVICES, so only the count matters here, never the physical order.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace synk {

struct PhysicalGpu {
  std::string bus_id;  // directory name, "0000:19:00.0"
  std::string uuid;    // "GPU-8932f937-...", empty when the driver does not say
};

// The GPUs listed under `root`; nullopt when the directory does not exist (no NVIDIA driver, or
// /proc not mounted as usual).
std::optional<std::vector<PhysicalGpu>> readProcNvidiaGpus(
    const std::string& root = "/proc/driver/nvidia/gpus");

struct VisibleDevices {
  int count = 0;
  // false: CUDA's own answer may differ (MIG entries, UUIDs that cannot be checked, a device
  // named twice); ask a probe child instead.
  bool exact = true;
  std::string note;  // why not exact, or what hid devices ("CUDA_VISIBLE_DEVICES='' hides ...")
};

// How many devices CUDA would see given CUDA_VISIBLE_DEVICES = `cvd` (nullptr: unset) and the
// physical GPUs. CUDA's rules: a comma-separated list of indices or (prefixes of) GPU UUIDs;
// devices are visible in list order; the first invalid entry ("-1", an index out of range, an
// unknown UUID) ends the list, so "" and "-1" hide every GPU and "0,2,-1,1" shows two.
VisibleDevices applyCudaVisibleDevices(const char* cvd, const std::vector<PhysicalGpu>& physical);

// What a forked child found when it loaded the CUDA driver.
struct DriverProbe {
  bool finished = false;   // the child reported before the deadline
  bool loadable = false;   // dlopen("libcuda.so.1") succeeded
  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000
  int init_result = -1;    // CUresult of cuInit (only when devices were counted)
  int device_count = -1;   // cuDeviceGetCount, -1 when not counted or failed
  std::string error;       // dlerror() text, or how the child failed
};

// Forks a child that dlopens libcuda.so.1 and, if `count_devices`, runs cuInit and
// cuDeviceGetCount; waits at most `deadline` (then SIGKILLs it). Never touches CUDA here.
DriverProbe probeCudaDriverInChild(bool count_devices, std::chrono::milliseconds deadline);

struct GpuEnumeration {
  int count = 0;
  std::string method;  // "/proc/driver/nvidia/gpus" or "probe child"
  std::string why;     // when count == 0: why no GPU is usable
};

// Devices usable by ranks in this environment (reads CUDA_VISIBLE_DEVICES now).
GpuEnumeration enumerateCudaDevices();

inline constexpr std::chrono::milliseconds kDriverProbeDeadline{30000};

}  // namespace synk
