#include "synk/harness/report/publish/export.h"

#include <set>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/base/json.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/report/publish/summary_json.h"

namespace synk::harness {
namespace {

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string seconds(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string optional(int64_t v) {
  return v == kNoValue ? "" : std::to_string(v);
}

RunRecord requireRun(const Store& store, int64_t run_id) {
  std::optional<RunRecord> run = store.run(run_id);
  if (!run) throw BadInput("no run " + std::to_string(run_id) + " in " + store.path());
  return *run;
}

std::set<std::string> axisNames(const std::vector<PointRecord>& points) {
  std::set<std::string> axes;
  for (const PointRecord& p : points) {
    for (const auto& [name, value] : p.axes)
      axes.insert(name);
  }
  return axes;
}

// The columns every CSV row starts with: run,point,seq,key, the axes, status.
std::string csvHeader(const std::set<std::string>& axes) {
  std::string header = "run,point,seq,key";
  for (const std::string& a : axes)
    header += "," + csvField(a);
  return header + ",status";
}

std::string csvPrefix(int64_t run_id, const PointRecord& p, const std::set<std::string>& axes) {
  std::string prefix = std::to_string(run_id) + "," + std::to_string(p.id) + "," +
                       std::to_string(p.seq) + "," + p.key;
  for (const std::string& a : axes)
    prefix += "," + csvField(p.axes.count(a) ? p.axes.at(a) : "");
  return prefix + "," + toString(p.status);
}

}  // namespace

void exportJson(std::FILE* out, const Store& store, int64_t run_id, const SummaryOptions& options) {
  const RunData data = loadRun(store, run_id, options);
  const std::vector<ScalingRow> rows =
      data.collectives() || data.micro()
          ? std::vector<ScalingRow>{}
          : scalingRows(data.points, runScaling(data.run), runScaling(data.run));
  OrderedJson head = {{"schema", kExportSchema},
                      {"generator", versionLine()},
                      {"run", runJson(data)},
                      {"env", store.run(run_id)->env},
                      {"points", OrderedJson::array()}};
  // The document is written as it goes: a point's samples (a million rows, for a long run) are
  // integers printed straight out, never held as a JSON tree.
  std::string text = head.dump();
  text.resize(text.size() - 2);  // "[]}" -> "[": the points follow
  std::fputs(text.c_str(), out);
  for (size_t i = 0; i < data.points.size(); ++i) {
    const PointRecord& p = data.points[i].record;
    OrderedJson repetitions = OrderedJson::array();
    for (const RepetitionRecord& r : store.repetitions(p.id))
      repetitions.push_back(repetitionJson(r));
    OrderedJson point = {{"id", p.id},
                         {"seq", p.seq},
                         {"key", p.key},
                         {"axes", p.axes},
                         {"status", toString(p.status)},
                         {"reason", p.reason},
                         {"wrong", p.wrong}};
    if (p.nodes > 0) {  // launched over nodes (experiment.launch); absent for forked points
      point["nodes"] = p.nodes;
      point["ranks_per_node"] = p.ranks_per_node;
      point["hosts"] = p.hosts;
    }
    point["summary"] = pointSummaryJson(data, i, rows);
    point["repetitions"] = std::move(repetitions);
    std::string start = point.dump();
    start.pop_back();  // the closing brace: the samples come last
    std::fprintf(out,
                 "%s\n%s,\"samples\":{\"columns\":[\"repetition\",\"rank\",\"step\",\"ns\","
                 "\"compute_ns\",\"collective_ns\"],\"rows\":[",
                 i ? "," : "", start.c_str());
    bool first = true;
    for (const SampleRecord& s : store.samples(p.id)) {
      std::fprintf(out, "%s[%d,%d,%d,%lld,%s,%s]", first ? "" : ",", s.repetition, s.rank, s.step,
                   static_cast<long long>(s.ns),
                   s.compute_ns == kNoValue ? "null" : std::to_string(s.compute_ns).c_str(),
                   s.collective_ns == kNoValue ? "null" : std::to_string(s.collective_ns).c_str());
      first = false;
    }
    std::fputs("]}}", out);
  }
  std::fputs("\n]}\n", out);
}

void exportCsv(std::FILE* out, const Store& store, int64_t run_id) {
  requireRun(store, run_id);
  const std::vector<PointRecord> points = store.points(run_id);
  const std::set<std::string> axes = axisNames(points);
  const std::string header = csvHeader(axes) + ",repetition,rank,step,ns,compute_ns,collective_ns";
  std::fprintf(out, "%s\n", header.c_str());
  for (const PointRecord& p : points) {
    const std::string prefix = csvPrefix(run_id, p, axes);
    for (const SampleRecord& s : store.samples(p.id)) {
      std::fprintf(out, "%s,%d,%d,%d,%lld,%s,%s\n", prefix.c_str(), s.repetition, s.rank, s.step,
                   static_cast<long long>(s.ns), optional(s.compute_ns).c_str(),
                   optional(s.collective_ns).c_str());
    }
  }
}

void exportRankCsv(std::FILE* out, const Store& store, int64_t run_id,
                   const SummaryOptions& options) {
  const RunData data = loadRun(store, run_id, options);
  std::vector<PointRecord> points;
  for (const AnalysedPoint& a : data.points)
    points.push_back(a.record);
  const std::set<std::string> axes = axisNames(points);
  const std::string header =
      csvHeader(axes) + ",rank,work_s,device_s,path_s,wait_s,step_s,straggler";
  std::fprintf(out, "%s\n", header.c_str());
  for (const AnalysedPoint& a : data.points) {
    if (!a.step_times) continue;
    const std::string prefix = csvPrefix(run_id, a.record, axes);
    const std::optional<Straggler>& straggler = a.step_times->straggler;
    for (const RankTimesSummary& r : a.step_times->ranks) {
      const std::string device = r.device_s ? seconds(*r.device_s) : "";
      std::fprintf(out, "%s,%d,%s,%s,%s,%s,%s,%d\n", prefix.c_str(), r.rank,
                   seconds(r.work_s).c_str(), device.c_str(), seconds(r.path_s).c_str(),
                   seconds(r.wait_s).c_str(), seconds(r.step_s).c_str(),
                   straggler && straggler->rank == r.rank ? 1 : 0);
    }
  }
}

}  // namespace synk::harness
