#pragma once
// What a run stores about where it ran, read without initialising CUDA in this process (it
// forks the ranks later): /proc, nvidia-smi (when installed, with a deadline), git, and the
// versions the build was configured with.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/plan/plan.h"
#include "synk/harness/records/records.h"

namespace synk::harness {

struct MachineContext {
  std::string host;
  std::string cpu_model;
  int cpu_threads = 0;  // hardware threads online
  int usable_cpus = 0;  // hardware threads this process may run on (affinity)
  int64_t memory_bytes = 0;
  int gpu_count = 0;         // GPUs the cuda backend sees (CUDA_VISIBLE_DEVICES applied)
  std::string gpu_note;      // why none, when gpu_count == 0
  std::string gpu_model;     // "NVIDIA H200" (several models: joined with " + ")
  std::string gpu_topology;  // nvidia-smi topo -m
  std::string driver_version, cuda_version, nccl_version;
  std::string build_type;

  // Identifies the kind of machine (not the host name): CPU model and threads, memory in GiB,
  // GPU model and count, driver, CUDA and NCCL versions, build type.
  std::string machineKey() const;
  MachineLimits limits() const;
};

MachineContext probeMachine();

struct SourceState {
  std::string commit = "unknown";
  bool dirty = false;
};
// The commit of the source tree synk-bench was built from, and whether it has changes.
SourceState sourceState();
// "synk-bench 0.1.0 (commit 8db2512b1c, Release build, CUDA 13.0.88)": what --version prints.
std::string versionLine();
// That source tree's path, as it was at build time.
std::string sourceDirectory();

// "2026-11-21T10:22:33Z"
std::string isoNow();

// This process, as a run records its writer.
struct ProcessIdentity {
  int64_t pid = 0;
  std::string boot_id;
  int64_t start = 0;  // clock ticks after boot
  std::string host;
};
ProcessIdentity selfIdentity();
// Whether that process still runs: nullopt when it cannot be told (another host).
std::optional<bool> processAlive(const ProcessIdentity& who);

// SYNK_*, NCCL_*, CUDA_*, OMP_* variables: what steers a measurement from outside the config.
std::map<std::string, std::string> relevantEnvironment();

// A run record with this machine, this build's commit, this process and the time filled in; the
// caller adds what was run (experiment, kind, tag, config, command line).
RunRecord contextRecord(const MachineContext& machine);

}  // namespace synk::harness
