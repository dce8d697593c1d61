#pragma once
// Inline SVG charts for the HTML report: lines with markers (optional whiskers and a dashed
// reference line) and stacked bars (optional whiskers). Every data mark has class "mark" and the
// <svg> says how many it drew (data-marks), so a browser test can check that each plot rendered
// all its data. The SVG scales to the page's width (a viewBox of 1100 x 420).
#include <string>
#include <vector>

namespace synk::harness {

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> low, high;  // whiskers (empty: none); same length as y
  bool reference = false;         // dashed, no markers (an "ideal" line)
};

struct LineChart {
  std::string id, title, x_label, y_label;
  bool log2_x = false;  // powers of two along x (ranks, batch, bytes)
  bool log_y = false;
  bool y_from_zero = true;
  std::vector<Series> series;
  bool integer_x = false;  // ticks only at whole numbers (commit numbers)
};

struct BarStack {
  std::string label;           // under the bar
  std::vector<double> parts;   // one per part name, stacked bottom up
  double low = -1, high = -1;  // a whisker over the whole bar (the spread), where >= 0
};

struct BarChart {
  std::string id, title, y_label;
  std::vector<std::string> part_names;
  std::vector<BarStack> bars;
};

// Each returns a <figure> holding an <svg class="plot">, or "" when there is nothing to draw.
std::string renderLineChart(const LineChart& chart);
std::string renderBarChart(const BarChart& chart);

// Escapes & < > " for HTML text and attributes.
std::string htmlEscape(const std::string& text);

}  // namespace synk::harness
