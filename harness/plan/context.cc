#include "synk/harness/plan/context.h"

#include "synk_source_state.h"  // generated: SYNK_BUILT_COMMIT, SYNK_BUILT_DIRTY

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "synk/collectives/registry.h"
#include "synk/harness/base/child.h"
#include "synk/harness/base/hash.h"
#include "synk/harness/base/machine_load.h"
#include "synk/harness/base/strings.h"

extern char** environ;
// NCCL's version call (a constant, no CUDA involved), present when the build links NCCL.
extern "C" __attribute__((weak)) int ncclGetVersion(int* version);

namespace synk::harness {
namespace {

constexpr std::chrono::seconds kToolDeadline{10};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value after "key<spaces>:" on the first line starting with key.
std::string field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos)
      return std::string(trim(std::string_view(line).substr(colon + 1)));
  }
  return {};
}

// Distinct lines joined with " + " (GPU models of a mixed machine).
std::string distinctLines(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string item(trim(line));
    if (item.empty() || out.find(item) != std::string::npos) continue;
    out += (out.empty() ? "" : " + ") + item;
  }
  return out;
}

void probeGpus(MachineContext& m) {
  BackendRegistry registry = makeDefaultRegistry();
  if (BackendFactory* cuda = registry.find("cuda")) {
    std::string why;
    if (cuda->isViable(&why)) {
      m.gpu_count = cuda->deviceCount();
    } else {
      m.gpu_note = why;
    }
  }
  if (auto names =
          captureOutput({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"},
                        kToolDeadline)) {
    std::string models, drivers;
    std::istringstream in(*names);
    std::string line;
    while (std::getline(in, line)) {
      const size_t comma = line.rfind(',');
      if (comma == std::string::npos) continue;
      models += line.substr(0, comma) + "\n";
      drivers += line.substr(comma + 1) + "\n";
    }
    m.gpu_model = distinctLines(models);
    m.driver_version = distinctLines(drivers);
  }
  if (auto topology = captureOutput({"nvidia-smi", "topo", "-m"}, kToolDeadline)) {
    m.gpu_topology = *topology;
  }
  if (m.driver_version.empty()) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  ..."
    const std::string version = readFile("/proc/driver/nvidia/version");
    m.driver_version = std::string(trim(version.substr(0, version.find('\n'))));
  }
  if (auto smi = captureOutput({"nvidia-smi"}, kToolDeadline)) {
    const size_t at = smi->find("CUDA Version:");
    if (at != std::string::npos) {
      m.cuda_version =
          "driver " + std::string(trim(smi->substr(at + 13, smi->find('|', at) - at - 13)));
    }
  }
  const std::string toolkit = SYNK_CUDA_TOOLKIT_VERSION;
  if (!toolkit.empty())
    m.cuda_version += (m.cuda_version.empty() ? "" : ", ") + ("toolkit " + toolkit);
  int nccl = 0;
  if (ncclGetVersion != nullptr && ncclGetVersion(&nccl) == 0 && nccl > 0) {
    // NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch since 2.9.
    m.nccl_version = std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + "." +
                     std::to_string(nccl % 100);
  }
}

}  // namespace

std::string MachineContext::machineKey() const {
  const int64_t gib = (memory_bytes + (int64_t{1} << 29)) >> 30;
  return hashHex("cpu=" + cpu_model + "\nthreads=" + std::to_string(cpu_threads) +
                 "\nmemory_gib=" + std::to_string(gib) + "\ngpu=" + gpu_model +
                 "\ngpus=" + std::to_string(gpu_count) + "\ndriver=" + driver_version +
                 "\ncuda=" + cuda_version + "\nnccl=" + nccl_version + "\nbuild=" + build_type);
}

MachineLimits MachineContext::limits() const {
  return {usable_cpus, gpu_count, gpu_note};
}

MachineContext probeMachine() {
  MachineContext m;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  m.host = host;
  m.cpu_model = field(readFile("/proc/cpuinfo"), "model name");
  m.cpu_threads = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  m.usable_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : m.cpu_threads;
  const std::string total = field(readFile("/proc/meminfo"), "MemTotal");  // "24576000 kB"
  m.memory_bytes = std::atoll(total.c_str()) * 1024;
  m.build_type = SYNK_BUILD_TYPE;
  probeGpus(m);
  return m;
}

std::string sourceDirectory() {
  return SYNK_SOURCE_DIR;
}

SourceState sourceState() {
  SourceState state;
  // The commit the binaries were built from, when the build knew it: a GPU machine's copy of the
  // tree may carry another .git, or none.
  if (std::string(SYNK_BUILT_COMMIT).size() > 0) {
    state.commit = SYNK_BUILT_COMMIT;
    state.dirty = SYNK_BUILT_DIRTY;
    return state;
  }
  const std::string dir = sourceDirectory();
  if (auto head = captureOutput({"git", "-C", dir, "rev-parse", "HEAD"}, kToolDeadline)) {
    state.commit = std::string(trim(*head));
    if (auto status = captureOutput(
            {"git", "-C", dir, "status", "--porcelain", "--untracked-files=no"}, kToolDeadline)) {
      state.dirty = !trim(*status).empty();
    }
  }
  return state;
}

std::string versionLine() {
  const SourceState source = sourceState();
  std::string line = std::string("synk-bench ") + SYNK_VERSION + " (commit " +
                     source.commit.substr(0, 10) + (source.dirty ? "+dirty" : "") + ", " +
                     (std::string(SYNK_BUILD_TYPE).empty() ? "default" : SYNK_BUILD_TYPE) +
                     " build";
  if (!std::string(SYNK_CUDA_TOOLKIT_VERSION).empty()) {
    line += std::string(", CUDA ") + SYNK_CUDA_TOOLKIT_VERSION;
  }
  return line + ")";
}

std::string isoNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

namespace {

// Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces).
int64_t startTicks(int64_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  std::string item;
  for (int f = 3; f <= 22 && rest >> item; ++f) {
    if (f == 22) return std::atoll(item.c_str());
  }
  return -1;
}

std::string bootId() {
  return std::string(trim(readFile("/proc/sys/kernel/random/boot_id")));
}

}  // namespace

ProcessIdentity selfIdentity() {
  ProcessIdentity me;
  me.pid = getpid();
  me.boot_id = bootId();
  me.start = startTicks(me.pid);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  me.host = host;
  return me;
}

std::optional<bool> processAlive(const ProcessIdentity& who) {
  const ProcessIdentity me = selfIdentity();
  if (!who.host.empty() && who.host != me.host) return std::nullopt;
  if (who.boot_id != me.boot_id) return false;  // rebooted since
  return startTicks(who.pid) == who.start;      // gone, or the pid was reused
}

std::map<std::string, std::string> relevantEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string item = *e;
    for (const char* prefix : {"SYNK_", "NCCL_", "CUDA_", "OMP_"}) {
      if (item.rfind(prefix, 0) == 0) {
        const size_t eq = item.find('=');
        out[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
      }
    }
  }
  return out;
}

RunRecord contextRecord(const MachineContext& m) {
  RunRecord run;
  const SourceState source = sourceState();
  run.commit = source.commit;
  run.dirty = source.dirty;
  run.build_type = m.build_type;
  run.host = m.host;
  run.cpu_model = m.cpu_model;
  run.cpu_cores = m.cpu_threads;
  run.memory_bytes = m.memory_bytes;
  run.gpu_model = m.gpu_model;
  run.gpu_count = m.gpu_count;
  run.gpu_topology = m.gpu_topology;
  run.driver_version = m.driver_version;
  run.cuda_version = m.cuda_version;
  run.nccl_version = m.nccl_version;
  run.machine_key = m.machineKey();
  run.started_at = isoNow();
  const ProcessIdentity me = selfIdentity();
  run.process_id = me.pid;
  run.boot_id = me.boot_id;
  run.process_start = me.start;
  run.env = relevantEnvironment();
  run.conditions = loadConditions(m.usable_cpus);
  return run;
}

}  // namespace synk::harness
