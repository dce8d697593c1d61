#include "synk/harness/base/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace synk::harness {
namespace {

double seconds(const timeval& t) {
  return double(t.tv_sec) + double(t.tv_usec) * 1e-6;
}

}  // namespace

CpuTimes cpuTimesNow() {
  CpuTimes t;
  t.at = std::chrono::steady_clock::now();
  std::ifstream stat("/proc/stat");
  std::string label;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is in user)
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu") {
    return t;
  }
  const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  t.busy_s = double(user + nice + system + irq + softirq + steal) * tick;
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  t.ours_s = seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
             seconds(children.ru_stime);
  t.valid = true;
  return t;
}

std::optional<double> otherCpus(const CpuTimes& before, const CpuTimes& after) {
  const double wall = std::chrono::duration<double>(after.at - before.at).count();
  if (!before.valid || !after.valid || wall <= 0) return std::nullopt;
  const double others = (after.busy_s - before.busy_s) - (after.ours_s - before.ours_s);
  return std::max(0.0, others / wall);
}

std::string loadConditions(int usable_cpus) {
  std::string out;
  double load = 0;
  if (std::ifstream("/proc/loadavg") >> load; load >= 0.5 * std::max(1, usable_cpus)) {
    char text[96];
    std::snprintf(text, sizeof text, "load average %.2f (1 min) on %d CPU(s)", load, usable_cpus);
    out = text;
  }
  // Google Benchmark's "CPU scaling is enabled": a governor other than performance changes
  // clocks under the measurement.
  std::set<std::string> governors;
  for (int cpu = 0; cpu < 4096; ++cpu) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                     "/cpufreq/scaling_governor");
    if (!in) break;
    std::string governor;
    if (in >> governor && governor != "performance") governors.insert(governor);
  }
  for (const std::string& g : governors)
    out += (out.empty() ? "" : "; ") + std::string("CPU frequency governor ") + g;
  return out;
}

}  // namespace synk::harness
