#pragma once
// How busy the machine was with other work while synk-bench measured: the noise Google
// Benchmark warns about ("load average", "CPU scaling is enabled"), measured rather than
// guessed. Per repetition, the CPUs that processes other than synk-bench's kept busy: every
// CPU's busy time (/proc/stat) minus the CPU time of synk-bench and its reaped children
// (getrusage), over the wall time. Per run, the load average and the CPU frequency governor
// when it began. Reading costs two small file reads and one system call per repetition.
#include <chrono>
#include <optional>
#include <string>

namespace synk::harness {

struct CpuTimes {
  double busy_s = 0;  // every CPU's non-idle time since boot (user, nice, system, irq, steal)
  double ours_s = 0;  // this process's and its reaped children's CPU time
  std::chrono::steady_clock::time_point at;
  bool valid = false;
};
CpuTimes cpuTimesNow();

// The CPUs other processes kept busy between two readings (mean over the wall time, >= 0);
// nullopt when either reading failed or no time passed. /proc/stat counts in clock ticks
// (10 ms): over short spans the figure is coarse, not wrong on average.
std::optional<double> otherCpus(const CpuTimes& before, const CpuTimes& after);

// "load average 3.92 (1 min) on 2 CPUs; CPU frequency governor powersave": what a reader of the
// results should know about the machine as the run began; "" when nothing is remarkable (load
// under half the CPUs, governor performance or none).
std::string loadConditions(int usable_cpus);

}  // namespace synk::harness
