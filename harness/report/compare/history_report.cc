#include "synk/harness/report/compare/history_report.h"

#include <algorithm>

#include "synk/harness/base/text_table.h"
#include "synk/harness/report/html/svg_plot.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {
namespace {

// The change point that begins at entry `index`, if any.
const ChangePoint* changeAt(const PointHistory& p, size_t index) {
  for (const ChangePoint& c : p.changes)
    if (c.index == index) return &c;
  return nullptr;
}

std::string shiftText(const ChangePoint& c) {
  return (c.shift >= 0 ? "shift +" : "shift ") + formatFixed(c.shift * 100, 1) + " % begins (p " +
         (c.p < 1e-6 ? std::string("< 1e-6") : "= " + formatFixed(c.p, 6)) + ")";
}

std::string changesLine(const PointHistory& p) {
  if (p.entries.size() < 6) {
    return "too few commits to look for lasting shifts (" + std::to_string(p.entries.size()) +
           "; at least 3 a side)";
  }
  if (p.changes.empty()) return "no lasting shift";
  std::string out = "lasting shifts at";
  for (const ChangePoint& c : p.changes) {
    out += " " + p.entries[c.index].label + " (" + (c.shift >= 0 ? "+" : "") +
           formatFixed(c.shift * 100, 1) + " %)";
  }
  return out;
}

int repetitions(const HistoryEntry& e) {
  return static_cast<int>(e.values.size());
}

}  // namespace

void printHistory(std::FILE* out, const History& history) {
  std::fprintf(out, "history of %s; %s\n", history.experiment.c_str(), history.order.c_str());
  for (const PointHistory& p : history.points) {
    std::fprintf(out, "\n%s (key %s): %s\n", p.label.c_str(), p.key.c_str(),
                 changesLine(p).c_str());
    TextTable table;
    table.column("#");
    table.column("commit", false);
    table.column("first run", false);
    table.column("runs");
    table.column("repetitions");
    table.column("median");
    table.column("", false);
    for (size_t i = 0; i < p.entries.size(); ++i) {
      const HistoryEntry& e = p.entries[i];
      const ChangePoint* c = changeAt(p, i);
      table.row({std::to_string(i + 1), e.label, e.first_started, std::to_string(e.runs.size()),
                 std::to_string(repetitions(e)), formatSeconds(e.median), c ? shiftText(*c) : ""});
    }
    table.print(out, "  ");
  }
}

std::string historyHtmlSection(const History& history) {
  std::string out = "<section id=\"history\"><h2>History of " + htmlEscape(history.experiment) +
                    "</h2><p class=\"note\">" + htmlEscape(history.order) +
                    "; a commit's value is the median of its runs' repetition values; dashed: "
                    "each segment's level between lasting shifts (binary segmentation, p &lt; "
                    "0.001, shift &ge; 5 %, 3 commits a side)</p>";
  int plot = 0;
  for (const PointHistory& p : history.points) {
    double slowest = 0;
    for (const HistoryEntry& e : p.entries)
      slowest = std::max(slowest, e.median);
    const auto [unit_name, unit] = plotUnit(slowest);
    LineChart chart{"history-" + std::to_string(plot++),
                    p.label,
                    "commit (# in the table)",
                    unit_name,
                    false,
                    false,
                    false,
                    {}};
    Series medians{"median (min … max)", {}, {}, {}, {}, false};
    for (size_t i = 0; i < p.entries.size(); ++i) {
      const std::vector<double>& values = p.entries[i].values;
      medians.x.push_back(double(i + 1));
      medians.y.push_back(p.entries[i].median * unit);
      medians.low.push_back(
          (values.empty() ? p.entries[i].median : *std::min_element(values.begin(), values.end())) *
          unit);
      medians.high.push_back(
          (values.empty() ? p.entries[i].median : *std::max_element(values.begin(), values.end())) *
          unit);
    }
    chart.series.push_back(std::move(medians));
    chart.integer_x = true;
    // Each segment's level: the median of its commits' values, drawn across the segment.
    std::vector<size_t> bounds = {0};
    for (const ChangePoint& c : p.changes)
      bounds.push_back(c.index);
    bounds.push_back(p.entries.size());
    for (size_t s = 0; s + 1 < bounds.size() && !p.changes.empty(); ++s) {
      std::vector<double> values;
      for (size_t i = bounds[s]; i < bounds[s + 1]; ++i)
        values.push_back(p.entries[i].median * unit);
      const double level = median(values);
      chart.series.push_back({"level from " + p.entries[bounds[s]].label,
                              {double(bounds[s] + 1), double(bounds[s + 1])},
                              {level, level},
                              {},
                              {},
                              true});
    }
    out += "<h3>" + htmlEscape(p.label) + "</h3><p class=\"note\">key " + htmlEscape(p.key) + ": " +
           htmlEscape(changesLine(p)) + "</p>" + renderLineChart(chart);
    out +=
        "<table><tr><th>#</th><th class=\"l\">commit</th><th class=\"l\">first run</th>"
        "<th>runs</th><th>repetitions</th><th>median</th><th class=\"l\"></th></tr>";
    for (size_t i = 0; i < p.entries.size(); ++i) {
      const HistoryEntry& e = p.entries[i];
      const ChangePoint* c = changeAt(p, i);
      out += std::string("<tr") + (c ? " class=\"shift\"" : "") + "><td>" + std::to_string(i + 1) +
             "</td><td class=\"l\">" + htmlEscape(e.label) + "</td><td class=\"l\">" +
             htmlEscape(e.first_started) + "</td><td>" + std::to_string(e.runs.size()) +
             "</td><td>" + std::to_string(repetitions(e)) + "</td><td>" +
             htmlEscape(formatSeconds(e.median)) + "</td><td class=\"l\">" +
             (c ? htmlEscape(shiftText(*c)) : "") + "</td></tr>";
    }
    out += "</table>";
  }
  return out + "</section>";
}

}  // namespace synk::harness
