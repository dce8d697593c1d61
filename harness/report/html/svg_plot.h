#pragma once
// Inline SVG charts for the HTML report: lines with markers (optional whiskers and a dashed
// reference line), stacked bars (optional whiskers) and lanes of segments (a timeline). Every data
// mark has class "mark" and the <svg> says how many it drew (data-marks), so a browser test can
// check that each plot rendered all its data. The SVG scales to the page's width (a viewBox of 1100
// x 420).
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

// A timeline (svg_lanes.cc): one lane a row (a rank), its segments laid end to end from 0 along
// x; segments of one part share its colour and the legend, each has its own hover title. A
// marked lane (a straggler) is outlined and its label says why.
struct LaneSegment {
  int part = 0;       // index into part_names
  double value = 0;   // its length, in x's unit
  std::string title;  // the hover text
};

struct Lane {
  std::string label;
  std::vector<LaneSegment> segments;
  std::string mark;  // "" or why the lane is marked ("straggler"): outlined, said in its label
};

struct LaneChart {
  std::string id, title, x_label;
  std::vector<std::string> part_names, part_colors;  // colours: "" or absent = the palette's
  std::vector<Lane> lanes;
};

// Each returns a <figure> holding an <svg class="plot">, or "" when there is nothing to draw.
std::string renderLineChart(const LineChart& chart);
std::string renderBarChart(const BarChart& chart);
std::string renderLaneChart(const LaneChart& chart);

// Escapes & < > " for HTML text and attributes.
std::string htmlEscape(const std::string& text);

}  // namespace synk::harness
