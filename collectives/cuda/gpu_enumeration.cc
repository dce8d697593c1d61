#include "synk/collectives/cuda/gpu_enumeration.h"

#include <cuda.h>  // CUresult and the driver's function types only: nothing is linked
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "synk/core/error.h"

namespace synk {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

bool allDigits(const std::string& text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Fills uuid and tells whether the driver excludes the GPU, from ".../<bus id>/information".
void readInformation(const std::string& path, PhysicalGpu& gpu, bool& excluded) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "GPU UUID" && startsWith(value, "GPU-")) gpu.uuid = value;
    if (key == "GPU Excluded" && value == "Yes") excluded = true;
  }
}

// What the probe child writes into the pipe: plain old data, one write.
struct ProbeReport {
  int32_t loadable;
  int32_t driver_version;
  int32_t init_result;
  int32_t device_count;
  char error[480];
};

void copyMessage(char (&dst)[480], const char* text) {
  std::strncpy(dst, text ? text : "", sizeof(dst) - 1);
  dst[sizeof(dst) - 1] = '\0';
}

// Runs in the forked child only: may initialise CUDA, never returns.
[[noreturn]] void runProbeChild(int fd, bool count_devices) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  ProbeReport report{};
  report.init_result = -1;
  report.device_count = -1;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    copyMessage(report.error, dlerror());
  } else {
    report.loadable = 1;
    using GetVersion = CUresult (*)(int*);
    using Init = CUresult (*)(unsigned int);
    using GetCount = CUresult (*)(int*);
    using ErrorName = CUresult (*)(CUresult, const char**);
    auto get_version = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion"));
    auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
    auto get_count = reinterpret_cast<GetCount>(dlsym(lib, "cuDeviceGetCount"));
    auto error_name = reinterpret_cast<ErrorName>(dlsym(lib, "cuGetErrorName"));
    int version = 0;
    if (get_version && get_version(&version) == CUDA_SUCCESS) report.driver_version = version;
    if (count_devices) {
      if (init == nullptr || get_count == nullptr) {
        copyMessage(report.error, "libcuda.so.1 lacks cuInit or cuDeviceGetCount");
      } else {
        const CUresult rc = init(0);
        report.init_result = static_cast<int32_t>(rc);
        int count = 0;
        if (rc == CUDA_SUCCESS && get_count(&count) == CUDA_SUCCESS) {
          report.device_count = count;
        } else if (rc != CUDA_SUCCESS) {
          const char* name = nullptr;
          if (error_name) error_name(rc, &name);
          copyMessage(report.error, name ? name : "cuInit failed");
        }
      }
    }
  }
  const char* data = reinterpret_cast<const char*>(&report);
  size_t left = sizeof(report);
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data += n;
    left -= static_cast<size_t>(n);
  }
  _exit(0);  // no atexit handlers, no static destructors of the parent's image
}

void reapChild(pid_t pid, bool kill_first) {
  if (kill_first) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::optional<std::vector<PhysicalGpu>> readProcNvidiaGpus(const std::string& root) {
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return std::nullopt;
  std::vector<PhysicalGpu> gpus;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    PhysicalGpu gpu;
    gpu.bus_id = name;
    bool excluded = false;
    readInformation(root + "/" + name + "/information", gpu, excluded);
    if (!excluded) gpus.push_back(std::move(gpu));
  }
  closedir(dir);
  std::sort(gpus.begin(), gpus.end(),
            [](const PhysicalGpu& a, const PhysicalGpu& b) { return a.bus_id < b.bus_id; });
  return gpus;
}

VisibleDevices applyCudaVisibleDevices(const char* cvd, const std::vector<PhysicalGpu>& physical) {
  VisibleDevices out;
  const int n_physical = static_cast<int>(physical.size());
  if (cvd == nullptr) {
    out.count = n_physical;
    return out;
  }
  const std::string list = cvd;
  std::set<int> seen;  // physical indices already listed
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string entry =
        trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    int index = -1;
    if (allDigits(entry)) {
      index = std::atoi(entry.c_str());
      if (index >= n_physical) {
        out.note = str("CUDA_VISIBLE_DEVICES='", list, "': index ", index, " is not one of the ",
                       n_physical, " GPU(s), so the list ends there");
        break;
      }
    } else if (startsWith(entry, "GPU-")) {
      int matches = 0;
      bool unknown = false;
      for (int i = 0; i < n_physical; ++i) {
        if (physical[i].uuid.empty()) unknown = true;
        if (startsWith(physical[i].uuid, entry)) {
          ++matches;
          index = i;
        }
      }
      if (unknown) {
        out.exact = false;
        out.note = "a GPU UUID in CUDA_VISIBLE_DEVICES cannot be checked against /proc";
        break;
      }
      if (matches != 1) {
        out.note = str("CUDA_VISIBLE_DEVICES='", list, "': '", entry, "' ",
                       matches == 0 ? "matches no GPU" : "matches several GPUs",
                       ", so the list ends there");
        break;
      }
    } else if (startsWith(entry, "MIG-")) {
      out.exact = false;
      out.note = "CUDA_VISIBLE_DEVICES names a MIG instance";
      break;
    } else {
      // "", "-1" or anything else: CUDA stops at the first invalid entry.
      out.note = str("CUDA_VISIBLE_DEVICES='", list, "' ",
                     out.count == 0 ? "hides every GPU" : "ends at an invalid entry",
                     entry.empty() ? "" : str(" ('", entry, "')"));
      break;
    }
    if (!seen.insert(index).second) {
      out.exact = false;
      out.note = str("CUDA_VISIBLE_DEVICES='", list, "' names a GPU twice");
      break;
    }
    ++out.count;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

DriverProbe probeCudaDriverInChild(bool count_devices, std::chrono::milliseconds deadline) {
  DriverProbe probe;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    probe.error = str("pipe2 failed: ", std::strerror(errno));
    return probe;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    probe.error = str("fork failed: ", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return probe;
  }
  if (pid == 0) {
    close(fds[0]);
    runProbeChild(fds[1], count_devices);
  }
  close(fds[1]);
  ProbeReport report{};
  char* data = reinterpret_cast<char*>(&report);
  size_t got = 0;
  const auto end = std::chrono::steady_clock::now() + deadline;
  bool timed_out = false;
  while (got < sizeof(report)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], data + got, sizeof(report) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child died before reporting
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  reapChild(pid, timed_out);
  if (timed_out) {
    probe.error = str("the CUDA driver probe did not answer within ", deadline.count(), " ms");
    return probe;
  }
  if (got < sizeof(report)) {
    probe.error = "the CUDA driver probe process died before reporting";
    return probe;
  }
  report.error[sizeof(report.error) - 1] = '\0';
  probe.finished = true;
  probe.loadable = report.loadable != 0;
  probe.driver_version = report.driver_version;
  probe.init_result = report.init_result;
  probe.device_count = report.device_count;
  probe.error = report.error;
  return probe;
}

GpuEnumeration enumerateCudaDevices() {
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  const auto physical = readProcNvidiaGpus();
  std::string proc_note = "/proc/driver/nvidia/gpus is missing";
  if (physical && !physical->empty()) {
    const VisibleDevices visible = applyCudaVisibleDevices(cvd, *physical);
    if (visible.exact) {
      GpuEnumeration out{visible.count, "/proc/driver/nvidia/gpus", ""};
      if (out.count == 0) out.why = visible.note;
      return out;
    }
    proc_note = visible.note;
  } else if (physical) {
    proc_note = "/proc/driver/nvidia/gpus lists no GPU";
  }
  // Ambiguous or no /proc view: let a throw-away child ask the driver.
  const DriverProbe probe = probeCudaDriverInChild(true, kDriverProbeDeadline);
  GpuEnumeration out{0, "probe child", ""};
  if (!probe.finished) {
    out.why = str(proc_note, "; ", probe.error);
  } else if (!probe.loadable) {
    out.why = str("no NVIDIA GPU found: ", proc_note,
                  " and the CUDA driver library libcuda.so.1 cannot be loaded (", probe.error, ")");
  } else if (probe.init_result != CUDA_SUCCESS) {
    out.why = str("cuInit failed in a probe process: ", probe.error, " (CUresult ",
                  probe.init_result, ")");
  } else {
    out.count = std::max(probe.device_count, 0);
    if (out.count == 0) {
      out.why = str("the CUDA driver reports no device",
                    cvd ? str(" (CUDA_VISIBLE_DEVICES='", cvd, "')") : std::string());
    }
  }
  return out;
}

}  // namespace synk
