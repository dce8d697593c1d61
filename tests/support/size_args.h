#pragma once
// Byte sizes on the benchmarks' command lines: "4096", "128K", "2M", "1G" (powers of 1024), and
// comma-separated lists of them ("none": an empty list).
#include <cstdlib>
#include <string>
#include <vector>

namespace synk::test {

inline double parseSize(const std::string& s) {
  double v = std::atof(s.c_str());
  const char unit = s.empty() ? 0 : s.back();
  if (unit == 'K' || unit == 'k') v *= 1024;
  if (unit == 'M' || unit == 'm') v *= 1 << 20;
  if (unit == 'G' || unit == 'g') v *= 1 << 30;
  return v;
}

inline std::vector<double> parseSizeList(const std::string& list) {
  std::vector<double> sizes;
  if (list == "none") return sizes;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = list.find(',', at);
    sizes.push_back(parseSize(list.substr(at, comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return sizes;
}

}  // namespace synk::test
