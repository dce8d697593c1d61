#pragma once
// What svg_plot.cc draws every plot with, shared with this folder's other charts
// (svg_lanes.cc): the canvas, the colours, numbers and ticks, a plot's opening and closing tags.
// Private to harness/report/html.
#include <string>
#include <vector>

namespace synk::harness::svg {

inline constexpr double kWidth = 1100, kHeight = 420;
inline constexpr double kLeft = 80, kRight = 270, kTop = 36, kBottom = 50;
extern const char* const kColors[10];

std::string num(double v);    // one decimal: a coordinate
std::string label(double v);  // three significant digits, 1024- or 1000-based suffixes
// Ticks at 1, 2 or 5 times a power of ten covering [low, high], and labels telling them apart.
std::vector<double> niceTicks(double low, double high);
std::vector<std::string> tickLabels(const std::vector<double>& ticks);
// <figure><svg class="plot" data-marks=MARKS viewBox="0 0 kWidth HEIGHT">, its title drawn.
std::string header(const std::string& id, const std::string& title, int marks,
                   double height = kHeight);
std::string footer(const std::string& title);

}  // namespace synk::harness::svg
