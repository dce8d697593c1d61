#include "synk/harness/report/text/report_text.h"

#include <algorithm>
#include <set>

#include "synk/harness/base/text_table.h"
#include "synk/harness/report/text/collectives_table.h"

namespace synk::harness {
namespace {

// The axes a launched point has, shown as columns of their own where the run has any.
bool launchAxis(const std::string& name) {
  return name == "nodes" || name == "ranks_per_node";
}

// Axes other than ranks and batch whose value differs between points: they get a column.
std::vector<std::string> varyingAxes(const RunData& data) {
  std::map<std::string, std::set<std::string>> values;
  for (const AnalysedPoint& p : data.points) {
    for (const auto& [name, value] : p.record.axes)
      values[name].insert(value);
  }
  std::vector<std::string> names;
  for (const auto& [name, seen] : values) {
    if (name != "ranks" && name != "batch" && !launchAxis(name) && seen.size() > 1)
      names.push_back(name);
  }
  return names;
}

// A run with launched points (experiment.launch): the nodes, ranks per node and hosts columns.
bool launched(const RunData& data) {
  return std::any_of(data.points.begin(), data.points.end(),
                     [](const AnalysedPoint& p) { return p.record.nodes > 0; });
}

std::string okOrStatusText(const PointRecord& p) {
  if (p.status == PointStatus::ok) return "ok";
  return statusText(p.status, p.reason);
}

}  // namespace

std::string formatJoules(double joules) {
  if (joules >= 1) return formatFixed(joules, 2) + " J";
  if (joules >= 1e-3) return formatFixed(joules * 1e3, 2) + " mJ";
  return formatFixed(joules * 1e6, 2) + " uJ";
}

std::string meanSigmaText(const Summary& s) {
  if (s.n == 0) return "-";
  if (s.n < 2) return formatSeconds(s.mean);
  return formatSeconds(s.mean) + " ± " + formatSeconds(s.stdev);
}

void printWarnings(std::FILE* out, const RunData& data, const char* prefix) {
  if (!data.run.conditions.empty()) {
    std::fprintf(out, "%swarning: when the run began: %s; times may be noisy\n", prefix,
                 data.run.conditions.c_str());
  }
  for (const AnalysedPoint& p : data.points) {
    for (const std::string& w : p.summary.warnings)
      std::fprintf(out, "%swarning: %s: %s\n", prefix, pointLabel(p.record.axes).c_str(),
                   w.c_str());
  }
}

void printRunList(std::FILE* out, const Store& store) {
  TextTable table;
  for (const char* h :
       {"run", "started", "status", "experiment", "kind", "tag", "points", "commit"})
    table.column(h, std::string(h) == "run" || std::string(h) == "points");
  for (const RunRecord& r : store.runs()) {
    const std::vector<PointRecord> points = store.points(r.id);
    table.row({std::to_string(r.id), r.started_at, effectiveStatus(r), r.experiment, r.kind, r.tag,
               std::to_string(points.size()), r.commit.substr(0, 10) + (r.dirty ? "+dirty" : "")});
  }
  table.print(out);
}

void printRunContext(std::FILE* out, const RunData& data) {
  const RunRecord& r = data.run;
  auto line = [&](const char* name, const std::string& value) {
    if (!value.empty()) std::fprintf(out, "  %-14s %s\n", name, value.c_str());
  };
  std::fprintf(out, "run %lld: %s (%s)\n", static_cast<long long>(r.id), r.experiment.c_str(),
               r.kind.c_str());
  line("status", data.status + (r.message.empty() ? "" : " (" + r.message + ")"));
  line("started", r.started_at);
  line("ended", r.ended_at);
  line("tag", r.tag);
  line("commit", r.commit + (r.dirty ? " (with uncommitted changes)" : ""));
  line("build", r.build_type);
  line("host", r.host);
  line("cpu", r.cpu_model + ", " + std::to_string(r.cpu_cores) + " threads");
  line("memory", std::to_string(r.memory_bytes >> 30) + " GiB");
  line("gpus", r.gpu_count ? std::to_string(r.gpu_count) + " x " + r.gpu_model : "none");
  line("driver", r.driver_version);
  line("cuda", r.cuda_version);
  line("nccl", r.nccl_version);
  line("telemetry", r.telemetry);
  line("conditions", r.conditions);
  line("config", r.config_file);
  line("command", r.command_line);
  line("machine key", r.machine_key);
}

void printScalingTable(std::FILE* out, const RunData& data, Scaling scaling) {
  const std::vector<std::string> extra = varyingAxes(data);
  const std::vector<ScalingRow> rows = scalingRows(data.points, runScaling(data.run), scaling);
  const bool nodes = launched(data);
  TextTable table;
  for (const std::string& name : extra)
    table.column(name, false);
  if (nodes) {
    table.column("nodes");
    table.column("ranks/node");
  }
  for (const char* h : {"ranks", "batch", "step (median)", "mean ± σ", "min … max", "samples/s",
                        "speedup", "95% CI", "efficiency"})
    table.column(h);
  // Energy columns only where NVML measured some (gpu_telemetry.h); none on a CPU-only run.
  const bool energy = std::any_of(rows.begin(), rows.end(), [](const ScalingRow& r) {
    return r.joules_per_sample.has_value();
  });
  if (energy) {
    for (const char* h : {"J/sample", "samples/J", "energy scaling"})
      table.column(h);
  }
  if (nodes) table.column("hosts", false);
  table.column("status", false);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ScalingRow& row = rows[i];
    const PointRecord& p = *row.point;
    std::vector<std::string> cells;
    for (const std::string& name : extra)
      cells.push_back(p.axes.count(name) ? p.axes.at(name) : "");
    if (nodes) {
      cells.push_back(p.nodes > 0 ? std::to_string(p.nodes) : "-");
      cells.push_back(p.nodes > 0 ? std::to_string(p.ranks_per_node) : "-");
    }
    cells.push_back(std::to_string(row.ranks));
    cells.push_back(std::to_string(row.batch));
    const bool measured = row.step_s > 0;
    const Summary& spread = data.points[i].summary.spread;
    cells.push_back(measured ? formatSeconds(row.step_s) : "-");
    cells.push_back(measured ? meanSigmaText(spread) : "-");
    cells.push_back(measured ? formatSeconds(spread.min) + " … " + formatSeconds(spread.max) : "-");
    cells.push_back(measured ? formatRate(row.samples_per_s) : "-");
    cells.push_back(row.speedup ? formatFixed(*row.speedup, 2) : "-");
    cells.push_back(row.speedup_ci ? "[" + formatFixed(row.speedup_ci->low, 2) + ", " +
                                         formatFixed(row.speedup_ci->high, 2) + "]"
                                   : "");
    cells.push_back(row.efficiency ? formatFixed(*row.efficiency * 100, 0) + " %" : "-");
    if (energy) {
      cells.push_back(row.joules_per_sample ? formatJoules(*row.joules_per_sample) : "-");
      cells.push_back(row.samples_per_joule ? formatRate(*row.samples_per_joule) : "-");
      cells.push_back(row.energy_scaling ? formatFixed(*row.energy_scaling * 100, 0) + " %" : "-");
    }
    if (nodes) cells.push_back(p.hosts.empty() ? "-" : p.hosts);
    cells.push_back(okOrStatusText(p));
    table.row(cells);
  }
  std::fprintf(out, "%s scaling: speedup = %s at the same %s batch; efficiency = speedup / ranks\n",
               scalingName(scaling),
               scaling == Scaling::Weak ? "ranks x t(1 rank) / t(ranks)" : "t(1 rank) / t(ranks)",
               scaling == Scaling::Weak ? "per-rank" : "global");
  std::fprintf(out,
               "step: the median of the repetitions' medians; mean ± σ and min … max over "
               "the repetitions\n");
  table.print(out);
  printWarnings(out, data, "");
  printStepTimes(out, data);
}

void printStepTimes(std::FILE* out, const RunData& data) {
  const bool any = std::any_of(data.points.begin(), data.points.end(),
                               [](const AnalysedPoint& a) { return a.step_times.has_value(); });
  if (!any) return;
  const std::vector<std::string> extra = varyingAxes(data);
  TextTable table;
  for (const std::string& name : extra)
    table.column(name, false);
  for (const char* h : {"ranks", "batch", "rank", "work", "device", "path", "wait", "step"})
    table.column(h);
  std::vector<std::string> stragglers;
  for (const AnalysedPoint& a : data.points) {
    if (!a.step_times) continue;
    for (const RankTimesSummary& r : a.step_times->ranks) {
      std::vector<std::string> cells;
      for (const std::string& name : extra)
        cells.push_back(a.record.axes.count(name) ? a.record.axes.at(name) : "");
      const bool first = r.rank == a.step_times->ranks.front().rank;
      cells.push_back(first ? a.record.axes.at("ranks") : "");
      cells.push_back(first ? a.record.axes.at("batch") : "");
      cells.push_back(std::to_string(r.rank));
      cells.push_back(formatSeconds(r.work_s));
      cells.push_back(r.device_s ? formatSeconds(*r.device_s) : "-");
      cells.push_back(formatSeconds(r.path_s));
      cells.push_back(formatSeconds(r.wait_s));
      cells.push_back(formatSeconds(r.step_s));
      table.row(cells);
    }
    if (const std::optional<Straggler>& s = a.step_times->straggler) {
      stragglers.push_back(pointLabel(a.record.axes) + ": " + stragglerText(*s));
    }
  }
  std::fprintf(
      out,
      "\nwhere the time goes, rank by rank (medians per step): work = the model's "
      "function (on a GPU: issuing its work), device = that work's span on the GPU, path = "
      "the runtime's own (the step beyond the longer of work and device, and the "
      "waits), wait = for the other ranks\n");
  table.print(out);
  for (const std::string& line : stragglers)
    std::fprintf(out, "%s\n", line.c_str());
}

void printMicroTable(std::FILE* out, const RunData& data) {
  TextTable table;
  table.column("benchmark", false);
  for (const char* h : {"repetitions", "time per iteration (median)", "min", "max"})
    table.column(h);
  table.column("status", false);
  for (const AnalysedPoint& a : data.points) {
    const Summary s = summarize(a.summary.repetition_medians);
    const bool measured = s.n > 0;
    table.row({a.record.axes.count("benchmark") ? a.record.axes.at("benchmark") : "",
               std::to_string(s.n), measured ? formatSeconds(s.median) : "-",
               measured ? formatSeconds(s.min) : "-", measured ? formatSeconds(s.max) : "-",
               okOrStatusText(a.record)});
  }
  table.print(out);
}

void printRunTable(std::FILE* out, const RunData& data, Scaling scaling) {
  if (data.micro()) {
    printMicroTable(out, data);
    printWarnings(out, data, "");
  } else if (data.collectives()) {
    printCollectivesTable(out, data);
    printWarnings(out, data, "# ");  // nccl-tests' parsers skip '#' lines
  } else {
    printScalingTable(out, data, scaling);
  }
}

}  // namespace synk::harness
