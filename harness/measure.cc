#include "harness/measure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace synk::harness {

double busbwFactor(Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case Collective::AllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::Gather:
    case Collective::ReduceScatter:
      return (n - 1) / n;
    case Collective::Broadcast:
    case Collective::Reduce:
      return 1.0;
  }
  return 1.0;
}

double algbwGBps(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds * 1e-9 : 0;
}

double busbwGBps(Collective collective, int ranks, double bytes, double seconds) {
  return algbwGBps(bytes, seconds) * busbwFactor(collective, ranks);
}

double median(std::vector<double> samples) {
  return percentile(std::move(samples), 50.0);
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double at = std::clamp(p, 0.0, 100.0) / 100.0 * double(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (at - double(lo));
}

std::string formatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes == std::floor(bytes) ? "%.0f %s" : "%.1f %s", bytes,
                units[unit]);
  return buf;
}

}  // namespace synk::harness
