#include "synk/harness/report/html/report_html.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/text_table.h"
#include "synk/harness/report/html/nodes_chart.h"
#include "synk/harness/report/html/rank_timeline.h"
#include "synk/harness/report/html/svg_plot.h"
#include "synk/harness/report/text/collectives_table.h"
#include "synk/harness/report/text/headline.h"
#include "synk/harness/report/text/report_text.h"

namespace synk::harness {
namespace {

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; padding: 0 24px; color: #222;
       max-width: 1500px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
.headline { font-size: 17px; margin: 8px 0 16px; padding: 10px 14px; background: #eef4fb;
            border-left: 4px solid #1f77b4; }
.headline p { margin: 4px 0; }
.warnings { color: #8a4b00; background: #fff8e6; padding: 6px 14px 6px 30px; margin: 8px 0; }
details { margin: 8px 0 16px; } summary { cursor: pointer; color: #444; }
svg.plot { width: 100%; height: auto; display: block; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dt { color: #666; } dd { margin: 0; font-family: monospace; white-space: pre-wrap; }
figure { margin: 12px 0; } figcaption { display: none; }
svg.plot text { font: 12px sans-serif; fill: #333; }
svg.plot .title { font-weight: bold; text-anchor: middle; }
svg.plot .xtick, svg.plot .xlabel { text-anchor: middle; }
svg.plot .ytick { text-anchor: end; } svg.plot .ylabel { text-anchor: middle; }
svg.plot .grid { stroke: #eee; } svg.plot .frame { fill: none; stroke: #999; }
svg.plot .whisker { stroke-width: 1.5; }
.note { color: #666; }
tr.worse td { background: #fde0dc; } tr.better td { background: #e0f3e0; }
tr.incomparable td { color: #888; } tr.shift td { background: #fff3cd; }
.timeline { display: flex; gap: 16px; align-items: flex-start; }
.timeline .lanes { flex: 1; min-width: 0; } tr.straggler td { background: #fde0dc; }
svg.plot .lane { text-anchor: end; } svg.plot .lane.marked { font-weight: bold; fill: #d62728; }
svg.plot .lane-mark { fill: none; stroke: #d62728; stroke-width: 2; }
)css";

// Marks each plot the browser drew with every data mark it declared; the test reads the counts.
constexpr const char* kCheck = R"js(
(function () {
  var plots = document.querySelectorAll('svg.plot'), drawn = 0;
  plots.forEach(function (p) {
    var box = p.getBBox(), marks = p.querySelectorAll('.mark');
    var visible = 0;
    marks.forEach(function (m) { var b = m.getBBox(); if (b.width > 0 && b.height > 0) visible++; });
    if (box.width > 0 && box.height > 0 && visible === Number(p.dataset.marks) && visible > 0) {
      p.setAttribute('data-drawn', 'yes');
      drawn++;
    }
  });
  document.body.setAttribute('data-plots', plots.length);
  document.body.setAttribute('data-plots-drawn', drawn);
})();
)js";

std::string cell(const std::string& text, bool left = false) {
  return std::string(left ? "<td class=\"l\">" : "<td>") + htmlEscape(text) + "</td>";
}

std::string contextList(const RunData& data) {
  const RunRecord& r = data.run;
  std::string out = "<dl>";
  auto item = [&](const char* name, const std::string& value) {
    if (!value.empty())
      out += "<dt>" + std::string(name) + "</dt><dd>" + htmlEscape(value) + "</dd>";
  };
  item("status", data.status + (r.message.empty() ? "" : " (" + r.message + ")"));
  item("started", r.started_at);
  item("ended", r.ended_at);
  item("commit", r.commit + (r.dirty ? " (uncommitted changes)" : ""));
  item("build", r.build_type);
  item("host", r.host);
  item("cpu", r.cpu_model + ", " + std::to_string(r.cpu_cores) + " threads, " +
                  std::to_string(r.memory_bytes >> 30) + " GiB");
  item("gpus", r.gpu_count ? std::to_string(r.gpu_count) + " x " + r.gpu_model : "none");
  // Only the versions there are: a CPU-only machine has no driver and no NCCL.
  std::string versions;
  for (const auto& [name, value] :
       {std::pair{"driver ", r.driver_version}, std::pair{"cuda ", r.cuda_version},
        std::pair{"nccl ", r.nccl_version}})
    if (!value.empty()) versions += (versions.empty() ? "" : "; ") + std::string(name) + value;
  item("versions", versions);
  item("gpu telemetry", r.telemetry);
  item("conditions", r.conditions);
  item("command", r.command_line);
  item("config", r.config_resolved);
  return out + "</dl>";
}

// The answer first (headline.h), then what to be wary of, then the context folded away.
std::string lead(const RunData& data, Scaling scaling) {
  std::string out = "<div class=\"headline\">";
  for (const std::string& line : headline(data, scaling))
    out += "<p>" + htmlEscape(line) + "</p>";
  out += "</div>";
  std::vector<std::string> warnings;
  if (!data.run.conditions.empty())
    warnings.push_back("when the run began: " + data.run.conditions + "; times may be noisy");
  for (const AnalysedPoint& p : data.points)
    for (const std::string& w : p.summary.warnings)
      warnings.push_back(pointLabel(p.record.axes) + ": " + w);
  if (!warnings.empty()) {
    out += "<ul class=\"warnings\">";
    for (const std::string& w : warnings)
      out += "<li>" + htmlEscape(w) + "</li>";
    out += "</ul>";
  }
  return out + "<details><summary>Run, machine and configuration</summary>" + contextList(data) +
         "</details>";
}

// "cpu shm batch=64": a point's axes other than `without`.
std::string seriesName(const PointRecord& p, const std::vector<std::string>& without) {
  std::string out;
  for (const auto& [name, value] : p.axes) {
    if (std::find(without.begin(), without.end(), name) != without.end()) continue;
    out += (out.empty() ? "" : " ") +
           (name == "backend" || name == "collectives" ? value : name + "=" + value);
  }
  return out;
}

// Each rank's step, point by point (experiment.step_times): its own work, the runtime's path and
// the wait for the others stacked, the GPU's time beside; stragglers named under the charts.
std::string rankTimesCharts(const RunData& data, const char* unit_name, double unit) {
  BarChart host{"rank-times",
                "Each rank's step (medians): its work, the runtime's path, waiting for the others",
                unit_name,
                {"work", "path", "wait"},
                {}};
  BarChart device{"rank-device", "Each rank's work on its GPU (median)", unit_name, {"device"}, {}};
  std::string notes;
  for (const AnalysedPoint& a : data.points) {
    if (!a.step_times) continue;
    const auto& axes = a.record.axes;
    const std::string point = axes.at("backend") + " " + axes.at("ranks") + "r b" +
                              (axes.count("batch") ? axes.at("batch") : "");
    for (const RankTimesSummary& r : a.step_times->ranks) {
      const std::string label = point + " r" + std::to_string(r.rank);
      host.bars.push_back({label, {r.work_s * unit, r.path_s * unit, r.wait_s * unit}});
      if (r.device_s) device.bars.push_back({label, {*r.device_s * unit}});
    }
    if (const std::optional<Straggler>& st = a.step_times->straggler) {
      notes +=
          "<p class=\"note\">" + htmlEscape(pointLabel(axes) + ": " + stragglerText(*st)) + ".</p>";
    }
  }
  if (host.bars.empty()) return "";
  return renderBarChart(host) + renderBarChart(device) + notes;
}

std::string trainBody(const RunData& data, Scaling scaling) {
  const std::vector<ScalingRow> rows = scalingRows(data.points, runScaling(data.run), scaling);
  std::map<std::string, Series> speedup, efficiency, throughput, startup, energy;
  // The point's spread, by row (scalingRows keeps the points' order).
  auto spread = [&](const ScalingRow& row) -> const PointSummary& {
    return data.points[static_cast<size_t>(&row - rows.data())].summary;
  };
  double max_ranks = 1;
  std::string bars_note;
  double slowest = 0;
  for (const ScalingRow& row : rows)
    slowest = std::max(slowest, row.step_s);
  const auto [unit_name, unit] = plotUnit(slowest);
  BarChart split{"time-split",
                 "Step time split (median per point; whisker: the repetitions' min and max)",
                 unit_name,
                 {"compute (calls)", "collectives (all_reduce)"},
                 {}};
  BarChart fused{"step-time",
                 "Step time (median per point; whisker: the repetitions' min and max)",
                 unit_name,
                 {"step"},
                 {}};
  for (const ScalingRow& row : rows) {
    if (row.step_s <= 0) continue;
    const PointRecord& p = *row.point;
    max_ranks = std::max<double>(max_ranks, row.ranks);
    // A launched point's line is its ranks per node's: x (ranks) then runs over its nodes.
    const std::string by_ranks = seriesName(p, {"ranks", "nodes"});
    if (row.speedup) {
      Series& s = speedup[by_ranks];
      s.name = by_ranks;
      s.x.push_back(row.ranks);
      s.y.push_back(*row.speedup);
      s.low.push_back(row.speedup_ci ? row.speedup_ci->low : *row.speedup);
      s.high.push_back(row.speedup_ci ? row.speedup_ci->high : *row.speedup);
      Series& e = efficiency[by_ranks];
      e.name = by_ranks;
      e.x.push_back(row.ranks);
      e.y.push_back(*row.efficiency * 100);
      e.low.push_back(row.speedup_ci ? row.speedup_ci->low / row.ranks * 100 : e.y.back());
      e.high.push_back(row.speedup_ci ? row.speedup_ci->high / row.ranks * 100 : e.y.back());
    }
    const PointSummary& summary = spread(row);
    const std::string by_batch = seriesName(p, {"batch"});
    Series& t = throughput[by_batch];
    t.name = by_batch;
    t.x.push_back(double(row.batch));
    t.y.push_back(row.samples_per_s);
    // Whiskers: the repetitions' slowest and fastest.
    t.low.push_back(summary.spread.max > 0 ? double(row.rows) / summary.spread.max
                                           : row.samples_per_s);
    t.high.push_back(summary.spread.min > 0 ? double(row.rows) / summary.spread.min
                                            : row.samples_per_s);
    if (row.startup_s) {
      Series& s = startup[by_ranks];
      s.name = by_ranks;
      s.x.push_back(row.ranks);
      s.y.push_back(*row.startup_s * 1e3);
      s.low.push_back(summary.startup_min_s * 1e3);
      s.high.push_back(summary.startup_max_s * 1e3);
    }
    if (row.joules_per_sample && row.rows > 0) {
      Series& e = energy[by_ranks];
      e.name = by_ranks;
      e.x.push_back(row.ranks);
      e.y.push_back(*row.joules_per_sample * 1e3);
      e.low.push_back(summary.energy_min_j / double(row.rows) * 1e3);
      e.high.push_back(summary.energy_max_j / double(row.rows) * 1e3);
    }
    const std::string label =
        p.axes.at("backend") + " " + std::to_string(row.ranks) + "r b" + std::to_string(row.batch);
    const double low = summary.spread.n > 1 ? summary.spread.min * unit : -1;
    const double high = summary.spread.n > 1 ? summary.spread.max * unit : -1;
    if (row.compute_s && row.collective_s) {
      split.bars.push_back({label, {*row.compute_s * unit, *row.collective_s * unit}, low, high});
    } else {
      fused.bars.push_back({label, {row.step_s * unit}, low, high});
    }
  }
  auto collect = [](std::map<std::string, Series>& m) {
    std::vector<Series> out;
    for (auto& [name, s] : m)
      out.push_back(std::move(s));
    return out;
  };
  LineChart speed{"speedup",
                  std::string("Speedup vs ranks (") + scalingName(scaling) +
                      " scaling, 95 % bootstrap whiskers)",
                  "ranks",
                  "speedup",
                  true,
                  false,
                  true,
                  collect(speedup)};
  speed.series.push_back({"ideal", {1, max_ranks}, {1, max_ranks}, {}, {}, true});
  LineChart eff{"efficiency", "Efficiency vs ranks", "ranks", "efficiency (%)", true, false,
                true,         collect(efficiency)};
  eff.series.push_back({"ideal", {1, max_ranks}, {100, 100}, {}, {}, true});
  const LineChart joules{"energy", "Energy per sample vs ranks (NVML, every GPU used)",
                         "ranks",  "millijoules per sample",
                         true,     false,
                         true,     collect(energy)};
  const LineChart thr{"throughput",
                      "Samples per second vs batch (per rank in weak scaling; whiskers: the "
                      "repetitions' slowest and fastest)",
                      "batch",
                      "samples/s",
                      true,
                      false,
                      true,
                      collect(throughput)};
  const LineChart start{"startup",
                        "Session start-up (fork, communicator, load) vs ranks; whiskers: min "
                        "and max",
                        "ranks",
                        "milliseconds",
                        true,
                        false,
                        true,
                        collect(startup)};
  std::string out = "<h2>Scaling</h2>";
  out += renderLineChart(speed) + nodesSpeedupChart(rows, scaling) + renderLineChart(eff) +
         renderLineChart(thr);
  out += renderLineChart(joules);
  out += "<h2>Where the time goes</h2>";
  const std::string by_rank = rankTimesCharts(data, unit_name, unit);
  if (split.bars.empty() && by_rank.empty()) {
    out +=
        "<p class=\"note\">The step is one fused call: its compute and collectives cannot be "
        "separated from outside (a step of calls and all_reduce actions can; "
        "experiment.step_times shows each rank's part).</p>";
  }
  out += renderBarChart(split) + renderBarChart(fused) + by_rank + renderLineChart(start);
  out += rankTimelineSection(data);
  out += "<h2>Table</h2><table><tr>";
  const bool with_energy = std::any_of(rows.begin(), rows.end(), [](const ScalingRow& r) {
    return r.joules_per_sample.has_value();
  });
  std::vector<const char*> headers = {"point",    "ranks",     "batch",     "step (median)",
                                      "mean ± σ", "min … max", "samples/s", "speedup",
                                      "95% CI",   "efficiency"};
  if (with_energy) headers.insert(headers.end(), {"J/sample", "samples/J", "energy scaling"});
  const bool launched =
      std::any_of(rows.begin(), rows.end(), [](const ScalingRow& r) { return r.point->nodes > 0; });
  if (launched) headers.push_back("hosts");
  headers.push_back("status");
  for (const char* h : headers)
    out += std::string("<th") +
           (h == std::string("point") || h == std::string("status") || h == std::string("hosts")
                ? " class=\"l\""
                : "") +
           ">" + h + "</th>";
  out += "</tr>";
  for (const ScalingRow& row : rows) {
    const PointRecord& p = *row.point;
    out +=
        "<tr>" + cell(seriesName(p, {"ranks", "batch"}), true) + cell(std::to_string(row.ranks)) +
        cell(std::to_string(row.batch)) + cell(row.step_s > 0 ? formatSeconds(row.step_s) : "-") +
        cell(row.step_s > 0 ? meanSigmaText(spread(row).spread) : "-") +
        cell(row.step_s > 0 ? formatSeconds(spread(row).spread.min) + " … " +
                                  formatSeconds(spread(row).spread.max)
                            : "-") +
        cell(row.step_s > 0 ? formatRate(row.samples_per_s) : "-") +
        cell(row.speedup ? formatFixed(*row.speedup, 2) : "-") +
        cell(row.speedup_ci ? "[" + formatFixed(row.speedup_ci->low, 2) + ", " +
                                  formatFixed(row.speedup_ci->high, 2) + "]"
                            : "") +
        cell(row.efficiency ? formatFixed(*row.efficiency * 100, 0) + " %" : "-") +
        (with_energy
             ? cell(row.joules_per_sample ? formatJoules(*row.joules_per_sample) : "-") +
                   cell(row.samples_per_joule ? formatRate(*row.samples_per_joule) : "-") +
                   cell(row.energy_scaling ? formatFixed(*row.energy_scaling * 100, 0) + " %" : "-")
             : "") +
        (launched ? cell(p.hosts.empty() ? "-" : p.hosts, true) : "") +
        cell(statusText(p.status, p.reason), true) + "</tr>";
  }
  return out + "</table>";
}

std::string collectivesBody(const RunData& data) {
  const std::vector<CollectiveRow> rows = collectiveRows(data);
  std::map<std::string, Series> busbw, time;
  for (const CollectiveRow& r : rows) {
    for (const auto& [backend, cells] : r.cells) {
      for (int place = 0; place < 2; ++place) {
        const CollectiveCell& c = cells[place];
        if (!c.present || c.time_s <= 0) continue;
        // "nccl all_reduce in 4r": short enough for the legend; other types say so.
        const std::string name = backend + " " + r.op + (place ? " in " : " out ") +
                                 std::to_string(r.ranks) + "r" +
                                 (r.dtype == "float32" ? "" : " " + ncclTypeName(r.dtype));
        // Whiskers: the slowest and the fastest of the point's values.
        const double factor = c.busbw / c.algbw;
        if (r.size > 0 && c.busbw > 0) {
          Series& s = busbw[name];
          s.name = name;
          s.x.push_back(double(r.size));
          s.y.push_back(c.busbw);
          s.low.push_back(c.time_max_s > 0 ? double(r.size) / c.time_max_s * 1e-9 * factor
                                           : c.busbw);
          s.high.push_back(c.time_min_s > 0 ? double(r.size) / c.time_min_s * 1e-9 * factor
                                            : c.busbw);
        }
        Series& t = time[name];
        t.name = name;
        t.x.push_back(double(std::max<int64_t>(r.size, 1)));
        t.y.push_back(c.time_s * 1e6);
        t.low.push_back((c.time_min_s > 0 ? c.time_min_s : c.time_s) * 1e6);
        t.high.push_back((c.time_max_s > 0 ? c.time_max_s : c.time_s) * 1e6);
      }
    }
  }
  LineChart chart{"busbw",
                  "Bus bandwidth vs message size (nccl-tests' busbw; whiskers: slowest and "
                  "fastest)",
                  "size (bytes)",
                  "busbw (GB/s)",
                  true,
                  false,
                  true,
                  {}};
  for (auto& [name, s] : busbw)
    chart.series.push_back(std::move(s));
  LineChart latency{
      "time",         "Time vs message size (log scale; whiskers: slowest and fastest)",
      "size (bytes)", "time (us)",
      true,           true,
      false,          {}};
  for (auto& [name, s] : time)
    latency.series.push_back(std::move(s));
  std::string out = "<h2>Bandwidth</h2>" + renderLineChart(chart);
  out += "<h2>Time</h2>" + renderLineChart(latency);
  out +=
      "<h2>Table</h2><table><tr><th class=\"l\">backend</th><th class=\"l\">op</th><th>ranks</th>"
      "<th>size (B)</th><th>count</th><th class=\"l\">type</th><th "
      "class=\"l\">redop</th><th>root</th>"
      "<th class=\"l\">place</th><th>time (us)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th>"
      "<th>#wrong</th><th class=\"l\">status</th></tr>";
  for (const CollectiveRow& r : rows) {
    for (const auto& [backend, cells] : r.cells) {
      for (int place = 0; place < 2; ++place) {
        const CollectiveCell& c = cells[place];
        if (!c.present) continue;
        out += "<tr>" + cell(backend, true) + cell(r.op, true) + cell(std::to_string(r.ranks)) +
               cell(std::to_string(r.size)) + cell(std::to_string(r.count)) +
               cell(ncclTypeName(r.dtype), true) + cell(r.redop, true) +
               cell(std::to_string(r.root)) + cell(place ? "in" : "out", true) +
               cell(c.time_s > 0 ? formatFixed(c.time_s * 1e6, 2) : "-") +
               cell(c.time_s > 0 ? formatFixed(c.algbw, 2) : "-") +
               cell(c.time_s > 0 ? formatFixed(c.busbw, 2) : "-") + cell(std::to_string(c.wrong)) +
               cell(statusText(c.status, c.reason), true) + "</tr>";
      }
    }
  }
  return out + "</table>";
}

std::string microBody(const RunData& data) {
  std::string out =
      "<h2>Micro-benchmarks</h2><table><tr><th class=\"l\">benchmark</th><th>repetitions</th>"
      "<th>time per iteration (median)</th><th>min</th><th>max</th><th class=\"l\">status</th>"
      "</tr>";
  for (const AnalysedPoint& a : data.points) {
    const Summary s = summarize(a.summary.repetition_medians);
    const bool measured = s.n > 0;
    out +=
        "<tr>" + cell(a.record.axes.count("benchmark") ? a.record.axes.at("benchmark") : "", true) +
        cell(std::to_string(s.n)) + cell(measured ? formatSeconds(s.median) : "-") +
        cell(measured ? formatSeconds(s.min) : "-") + cell(measured ? formatSeconds(s.max) : "-") +
        cell(statusText(a.record.status, a.record.reason), true) + "</tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string htmlPage(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
         "<title>" +
         htmlEscape(title) + "</title><style>" + kStyle + "</style></head><body>\n" + body +
         "<script>" + std::string(kCheck) + "</script></body></html>\n";
}

std::string reportBody(const RunData& data, Scaling scaling) {
  return lead(data, scaling) + (data.collectives() ? collectivesBody(data)
                                : data.micro()     ? microBody(data)
                                                   : trainBody(data, scaling));
}

std::string reportTitle(const RunData& data) {
  return "synk-bench run " + std::to_string(data.run.id) + ": " + data.run.experiment;
}

std::string renderHtmlReport(const RunData& data, Scaling scaling, const std::string& sections) {
  const std::string title = reportTitle(data);
  return htmlPage(title,
                  "<h1>" + htmlEscape(title) + "</h1>" + reportBody(data, scaling) + sections);
}

void writeTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw BadInput("cannot write " + path);
  out << text;
  out.close();
  if (!out) throw BadInput("writing " + path + " failed");
}

void writeHtmlReport(const std::string& path, const RunData& data, Scaling scaling,
                     const std::string& sections) {
  writeTextFile(path, renderHtmlReport(data, scaling, sections));
}

}  // namespace synk::harness
