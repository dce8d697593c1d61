#include "synk/harness/stats/measure.h"

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
    case Collective::Scatter:
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

int64_t CollectiveShape::bytes() const {
  return static_cast<int64_t>(total * element_bytes);
}

CollectiveShape collectiveShape(Collective op, int64_t bytes, int ranks, DType dtype) {
  CollectiveShape s;
  s.element_bytes = dtypeSize(dtype);
  const size_t b = static_cast<size_t>(std::max<int64_t>(0, bytes));
  if (op == Collective::AllGather || op == Collective::Gather || op == Collective::Scatter) {
    const size_t per_rank = b / static_cast<size_t>(ranks) / 16 * 16;
    s.part = per_rank / s.element_bytes;
    s.total = s.part * static_cast<size_t>(ranks);
  } else {
    s.total = s.part = b / s.element_bytes;
  }
  return s;
}

}  // namespace synk::harness
