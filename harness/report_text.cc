#include "synk/harness/report_text.h"

#include <set>

#include "synk/harness/collectives_table.h"
#include "synk/harness/text_table.h"

namespace synk::harness {
namespace {

// Axes other than ranks and batch whose value differs between points: they get a column.
std::vector<std::string> varyingAxes(const RunData& data) {
  std::map<std::string, std::set<std::string>> values;
  for (const AnalysedPoint& p : data.points) {
    for (const auto& [name, value] : p.record.axes)
      values[name].insert(value);
  }
  std::vector<std::string> names;
  for (const auto& [name, seen] : values) {
    if (name != "ranks" && name != "batch" && seen.size() > 1) names.push_back(name);
  }
  return names;
}

std::string statusText(const PointRecord& p) {
  if (p.status == "ok") return "ok";
  return p.status + (p.reason.empty() ? "" : ": " + p.reason);
}

}  // namespace

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
  line("config", r.config_file);
  line("command", r.command_line);
  line("machine key", r.machine_key);
}

void printScalingTable(std::FILE* out, const RunData& data, Scaling scaling) {
  const std::vector<std::string> extra = varyingAxes(data);
  const std::vector<ScalingRow> rows = scalingRows(data.points, runScaling(data.run), scaling);
  TextTable table;
  for (const std::string& name : extra)
    table.column(name, false);
  for (const char* h :
       {"ranks", "batch", "step (median)", "samples/s", "speedup", "95% CI", "efficiency"})
    table.column(h);
  table.column("status", false);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ScalingRow& row = rows[i];
    const PointRecord& p = *row.point;
    std::vector<std::string> cells;
    for (const std::string& name : extra)
      cells.push_back(p.axes.count(name) ? p.axes.at(name) : "");
    cells.push_back(std::to_string(row.ranks));
    cells.push_back(std::to_string(row.batch));
    const bool measured = row.step_s > 0;
    cells.push_back(measured ? formatSeconds(row.step_s) : "-");
    cells.push_back(measured ? formatRate(row.samples_per_s) : "-");
    cells.push_back(row.speedup ? formatFixed(*row.speedup, 2) : "-");
    cells.push_back(row.speedup_ci ? "[" + formatFixed(row.speedup_ci->low, 2) + ", " +
                                         formatFixed(row.speedup_ci->high, 2) + "]"
                                   : "");
    cells.push_back(row.efficiency ? formatFixed(*row.efficiency * 100, 0) + " %" : "-");
    cells.push_back(statusText(p));
    table.row(cells);
  }
  std::fprintf(out, "%s scaling: speedup = %s at the same %s batch; efficiency = speedup / ranks\n",
               scalingName(scaling),
               scaling == Scaling::Weak ? "ranks x t(1 rank) / t(ranks)" : "t(1 rank) / t(ranks)",
               scaling == Scaling::Weak ? "per-rank" : "global");
  table.print(out);
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
               statusText(a.record)});
  }
  table.print(out);
}

void printRunTable(std::FILE* out, const RunData& data, Scaling scaling) {
  if (data.micro()) {
    printMicroTable(out, data);
  } else if (data.collectives()) {
    printCollectivesTable(out, data);
  } else {
    printScalingTable(out, data, scaling);
  }
}

}  // namespace synk::harness
