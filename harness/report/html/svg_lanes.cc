// renderLaneChart (svg_plot.h): a timeline of lanes, drawn with svg_plot.cc's pieces.
#include <algorithm>

#include "synk/harness/report/html/svg_plot.h"
#include "synk/harness/report/html/svg_plot_impl.h"

namespace synk::harness {
namespace {

using namespace svg;

constexpr double kLabels = 170;  // the lanes' labels, left of x = 0
constexpr double kLane = 28, kGap = 10;
// As a bar chart's parts: a segment thinner than a printed coordinate still shows (0.5 px).
constexpr double kMinPixels = 0.5;

std::string color(const LaneChart& chart, size_t part) {
  return part < chart.part_colors.size() && !chart.part_colors[part].empty()
             ? chart.part_colors[part]
             : kColors[part % 10];
}

}  // namespace

std::string renderLaneChart(const LaneChart& chart) {
  double longest = 0;
  int marks = 0;
  for (const Lane& lane : chart.lanes) {
    double sum = 0;
    for (const LaneSegment& s : lane.segments) {
      if (s.value <= 0) continue;
      sum += s.value;
      ++marks;
    }
    longest = std::max(longest, sum);
  }
  if (marks == 0) return {};
  const std::vector<double> ticks = niceTicks(0, longest);
  const double end = std::max(longest, ticks.back());
  const double x0 = kLabels, x1 = kWidth - kRight;
  auto x = [&](double v) { return x0 + v / end * (x1 - x0); };
  const double bottom = kTop + 8 + double(chart.lanes.size()) * (kLane + kGap);
  const double height = bottom + kBottom;
  std::string out = header(chart.id, chart.title, marks, height);
  const std::vector<std::string> labels = tickLabels(ticks);
  for (size_t i = 0; i < ticks.size(); ++i) {
    out += "<line class=\"grid\" x1=\"" + num(x(ticks[i])) + "\" x2=\"" + num(x(ticks[i])) +
           "\" y1=\"" + num(kTop) + "\" y2=\"" + num(bottom) + "\"/><text class=\"xtick\" x=\"" +
           num(x(ticks[i])) + "\" y=\"" + num(bottom + 16) + "\">" + labels[i] + "</text>";
  }
  out += "<text class=\"xlabel\" x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(height - 10) + "\">" +
         htmlEscape(chart.x_label) + "</text>";
  for (size_t i = 0; i < chart.lanes.size(); ++i) {
    const Lane& lane = chart.lanes[i];
    const double top = kTop + 8 + double(i) * (kLane + kGap) + kGap / 2;
    const std::string name = lane.label + (lane.mark.empty() ? "" : " (" + lane.mark + ")");
    out += "<text class=\"lane" + std::string(lane.mark.empty() ? "" : " marked") + "\" x=\"" +
           num(x0 - 8) + "\" y=\"" + num(top + kLane / 2 + 4) + "\">" + htmlEscape(name) +
           "</text>";
    double at = 0;
    for (const LaneSegment& s : lane.segments) {
      if (s.value <= 0) continue;
      const double width = std::max(x(at + s.value) - x(at), kMinPixels);
      out += "<rect class=\"mark\" fill=\"" + color(chart, size_t(s.part)) + "\" x=\"" +
             num(x(at)) + "\" y=\"" + num(top) + "\" width=\"" + num(width) + "\" height=\"" +
             num(kLane) + "\"><title>" + htmlEscape(s.title) + "</title></rect>";
      at += s.value;
    }
    if (!lane.mark.empty()) {
      out += "<rect class=\"lane-mark\" x=\"" + num(x0 - 3) + "\" y=\"" + num(top - 3) +
             "\" width=\"" + num(x(at) - x0 + 6) + "\" height=\"" + num(kLane + 6) + "\"><title>" +
             htmlEscape(name) + "</title></rect>";
    }
  }
  for (size_t k = 0; k < chart.part_names.size(); ++k) {
    const double y = kTop + 8 + double(k) * 18;
    out += "<rect x=\"" + num(x1 + 14) + "\" y=\"" + num(y) +
           "\" width=\"18\" height=\"12\" fill=\"" + color(chart, k) +
           "\"/><text class=\"legend\" x=\"" + num(x1 + 38) + "\" y=\"" + num(y + 10) + "\">" +
           htmlEscape(chart.part_names[k]) + "</text>";
  }
  return out + footer(chart.title);
}

}  // namespace synk::harness
