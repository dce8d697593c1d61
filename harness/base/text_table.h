#pragma once
// A plain-text table with columns sized to their contents: left-aligned text, right-aligned
// numbers. Used by every console report.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace synk::harness {

class TextTable {
 public:
  // A column per header; `right` aligns it right (numbers).
  void column(std::string header, bool right = true);
  void row(std::vector<std::string> cells);
  void print(std::FILE* out, const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// "812 ns", "45.6 us", "1.23 ms", "2.05 s"
std::string formatSeconds(double seconds);
// "952", "98.5 k", "1.21 M"
std::string formatRate(double per_second);
// The unit a plot of times up to `slowest` seconds reads best in: {"microseconds", 1e6}, ...
std::pair<const char*, double> plotUnit(double slowest);
// Fixed decimals: formatFixed(1.2345, 2) = "1.23"
std::string formatFixed(double value, int decimals);

}  // namespace synk::harness
