#include "synk/harness/report/html/rank_timeline.h"

#include <algorithm>

#include "synk/harness/base/text_table.h"
#include "synk/harness/report/html/svg_plot.h"

namespace synk::harness {
namespace {

std::string micros(int64_t ns) {
  return formatFixed(double(ns) / 1e3, 1) + " us";
}

std::string td(const std::string& text, bool left = false) {
  return std::string(left ? "<td class=\"l\">" : "<td>") + htmlEscape(text) + "</td>";
}

// Per rank, the medians over every timed step of the point (what the console prints).
std::string mediansTable(const StepTimesSummary& t) {
  std::string out =
      "<table class=\"rank-medians\"><tr><th>rank</th><th>work</th><th>device</th>"
      "<th>path</th><th>wait</th><th>step</th><th class=\"l\"></th></tr>";
  for (const RankTimesSummary& r : t.ranks) {
    const bool straggler = t.straggler && t.straggler->rank == r.rank;
    out += std::string(straggler ? "<tr class=\"straggler\">" : "<tr>") +
           td(std::to_string(r.rank)) + td(formatSeconds(r.work_s)) +
           td(r.device_s ? formatSeconds(*r.device_s) : "-") + td(formatSeconds(r.path_s)) +
           td(formatSeconds(r.wait_s)) + td(formatSeconds(r.step_s)) +
           td(straggler ? "straggler" : "", true) + "</tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string stepTimelineChart(const std::string& id, const std::string& point,
                              const TimelineStep& step, int straggler) {
  LaneChart chart{id,
                  point + ": the " + step.which + " of repetition " +
                      std::to_string(step.repetition) + " (step " + std::to_string(step.step) +
                      ", " + formatSeconds(step.step_s) + ")",
                  "microseconds",
                  {"work (longer of host and device)", "runtime path", "wait for the others"},
                  {"#1f77b4", "#ff7f0e", "#b0b0b0"},
                  {}};
  for (const RankTimesRecord& r : step.ranks) {
    const std::string rank = "rank " + std::to_string(r.rank);
    const int64_t work = std::max(r.work_ns, r.device_ns);
    const std::string device = r.device_ns >= 0 ? ", device " + micros(r.device_ns) : "";
    chart.lanes.push_back(
        {rank,
         {{0, double(work) / 1e3,
           rank + ": work " + micros(work) + " (host " + micros(r.work_ns) + device + ")"},
          {1, double(r.path_ns) / 1e3, rank + ": runtime path " + micros(r.path_ns)},
          {2, double(r.wait_ns) / 1e3, rank + ": wait for the others " + micros(r.wait_ns)}},
         r.rank == straggler ? "straggler" : ""});
  }
  return renderLaneChart(chart);
}

std::string rankTimelineSection(const RunData& data) {
  std::string out;
  for (size_t i = 0; i < data.points.size(); ++i) {
    const AnalysedPoint& a = data.points[i];
    if (!a.step_times || a.step_times->timeline.empty()) continue;
    const StepTimesSummary& t = *a.step_times;
    const std::string point = pointLabel(a.record.axes);
    const int straggler = t.straggler ? t.straggler->rank : -1;
    out += "<h3>" + htmlEscape(point) + "</h3><div class=\"timeline\"><div class=\"lanes\">";
    for (const TimelineStep& step : t.timeline) {
      const std::string id = "timeline-" + std::to_string(i) + "-" +
                             (step.which == "median step" ? "median" : "slowest");
      out += stepTimelineChart(id, point, step, straggler);
    }
    out += "</div>" + mediansTable(t) + "</div>";
    if (t.straggler)
      out += "<p class=\"note\">" + htmlEscape(stragglerText(*t.straggler)) + ".</p>";
  }
  if (out.empty()) return "";
  return "<section id=\"timeline\"><h2>Step timeline, rank by rank</h2><p class=\"note\">Per "
         "point, the median and the slowest step of its median repetition (the repetition whose "
         "median step is the median; a step's time is its slowest rank's). Each lane is a rank: "
         "its work, the runtime's path and its wait for the other ranks laid end to end (their "
         "order inside the step is not recorded: the waits fall at its start, the agreement and "
         "its end). Hover a segment for its microseconds. Beside: each rank's medians over every "
         "timed step.</p>" +
         out + "</section>";
}

}  // namespace synk::harness
