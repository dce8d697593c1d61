#include "synk/harness/base/text_table.h"

#include <algorithm>
#include <cmath>

namespace synk::harness {
namespace {

// Display width of UTF-8 text (counts code points; every character used here is one column).
size_t width(const std::string& text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

}  // namespace

void TextTable::column(std::string header, bool right) {
  headers_.push_back(std::move(header));
  right_.push_back(right);
}

void TextTable::row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::FILE* out, const std::string& indent) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = width(headers_[c]);
    for (const auto& r : rows_)
      widths[c] = std::max(widths[c], width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(widths[c] - width(cells[c]), ' ');
      const bool last = c + 1 == cells.size();
      text += right_[c] ? pad + cells[c] : cells[c] + (last ? "" : pad);
      if (!last) text += "  ";
    }
    std::fprintf(out, "%s\n", text.c_str());
  };
  line(headers_);
  for (const auto& r : rows_)
    line(r);
}

std::string formatFixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string formatSeconds(double s) {
  const double a = std::abs(s);
  if (a < 1e-6) return formatFixed(s * 1e9, 0) + " ns";
  if (a < 1e-3) return formatFixed(s * 1e6, a < 1e-5 ? 2 : 1) + " us";
  if (a < 1) return formatFixed(s * 1e3, a < 1e-2 ? 2 : 1) + " ms";
  return formatFixed(s, 2) + " s";
}

std::pair<const char*, double> plotUnit(double slowest) {
  if (slowest < 1e-3) return {"microseconds", 1e6};
  if (slowest < 1.0) return {"milliseconds", 1e3};
  return {"seconds", 1.0};
}

std::string formatRate(double r) {
  if (r < 1e3) return formatFixed(r, 0);
  if (r < 1e6) return formatFixed(r / 1e3, r < 1e4 ? 2 : 1) + " k";
  if (r < 1e9) return formatFixed(r / 1e6, r < 1e7 ? 2 : 1) + " M";
  return formatFixed(r / 1e9, 2) + " G";
}

}  // namespace synk::harness
