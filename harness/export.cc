#include "synk/harness/export.h"

#include <set>

#include "synk/harness/errors.h"
#include "synk/harness/json.h"
#include "synk/harness/report_data.h"

namespace synk::harness {
namespace {

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string optional(int64_t v) {
  return v == kNoValue ? "" : std::to_string(v);
}

RunRecord requireRun(const Store& store, int64_t run_id) {
  std::optional<RunRecord> run = store.run(run_id);
  if (!run) throw BadInput("no run " + std::to_string(run_id) + " in " + store.path());
  return *run;
}

}  // namespace

void exportJson(std::FILE* out, const Store& store, int64_t run_id) {
  const RunRecord r = requireRun(store, run_id);
  const std::map<std::string, std::string> run = {{"id", std::to_string(r.id)},
                                                  {"experiment", r.experiment},
                                                  {"kind", r.kind},
                                                  {"tag", r.tag},
                                                  {"status", effectiveStatus(r)},
                                                  {"message", r.message},
                                                  {"started_at", r.started_at},
                                                  {"ended_at", r.ended_at},
                                                  {"commit", r.commit},
                                                  {"dirty", r.dirty ? "true" : "false"},
                                                  {"build_type", r.build_type},
                                                  {"host", r.host},
                                                  {"cpu_model", r.cpu_model},
                                                  {"cpu_threads", std::to_string(r.cpu_cores)},
                                                  {"memory_bytes", std::to_string(r.memory_bytes)},
                                                  {"gpu_model", r.gpu_model},
                                                  {"gpu_count", std::to_string(r.gpu_count)},
                                                  {"gpu_topology", r.gpu_topology},
                                                  {"driver_version", r.driver_version},
                                                  {"cuda_version", r.cuda_version},
                                                  {"nccl_version", r.nccl_version},
                                                  {"machine_key", r.machine_key},
                                                  {"config_file", r.config_file},
                                                  {"config_text", r.config_text},
                                                  {"config_resolved", r.config_resolved},
                                                  {"command_line", r.command_line}};
  std::fprintf(out, "{\"run\":%s,\"env\":%s,\"points\":[", toJson(run).c_str(),
               toJson(r.env).c_str());
  bool first_point = true;
  for (const PointRecord& p : store.points(run_id)) {
    std::fprintf(out,
                 "%s\n{\"id\":%lld,\"seq\":%d,\"key\":%s,\"axes\":%s,\"status\":%s,\"reason\":%s,"
                 "\"wrong\":%lld,\"repetitions\":[",
                 first_point ? "" : ",", static_cast<long long>(p.id), p.seq,
                 jsonString(p.key).c_str(), toJson(p.axes).c_str(), jsonString(p.status).c_str(),
                 jsonString(p.reason).c_str(), static_cast<long long>(p.wrong));
    first_point = false;
    bool first = true;
    for (const RepetitionRecord& rep : store.repetitions(p.id)) {
      std::fprintf(
          out,
          "%s{\"repetition\":%d,\"startup_ns\":%lld,\"steps\":%lld,\"status\":%s,\"message\":%s}",
          first ? "" : ",", rep.repetition, static_cast<long long>(rep.startup_ns),
          static_cast<long long>(rep.steps), jsonString(rep.status).c_str(),
          jsonString(rep.message).c_str());
      first = false;
    }
    std::fprintf(out,
                 "],\"samples\":{\"columns\":[\"repetition\",\"rank\",\"step\",\"ns\","
                 "\"compute_ns\",\"collective_ns\"],\"rows\":[");
    first = true;
    for (const SampleRecord& s : store.samples(p.id)) {
      std::fprintf(out, "%s[%d,%d,%d,%lld,%s,%s]", first ? "" : ",", s.repetition, s.rank, s.step,
                   static_cast<long long>(s.ns),
                   s.compute_ns == kNoValue ? "null" : std::to_string(s.compute_ns).c_str(),
                   s.collective_ns == kNoValue ? "null" : std::to_string(s.collective_ns).c_str());
      first = false;
    }
    std::fprintf(out, "]}}");
  }
  std::fprintf(out, "\n]}\n");
}

void exportCsv(std::FILE* out, const Store& store, int64_t run_id) {
  requireRun(store, run_id);
  const std::vector<PointRecord> points = store.points(run_id);
  std::set<std::string> axes;
  for (const PointRecord& p : points) {
    for (const auto& [name, value] : p.axes)
      axes.insert(name);
  }
  std::string header = "run,point,seq,key";
  for (const std::string& a : axes)
    header += "," + csvField(a);
  header += ",status,repetition,rank,step,ns,compute_ns,collective_ns";
  std::fprintf(out, "%s\n", header.c_str());
  for (const PointRecord& p : points) {
    std::string prefix = std::to_string(run_id) + "," + std::to_string(p.id) + "," +
                         std::to_string(p.seq) + "," + p.key;
    for (const std::string& a : axes)
      prefix += "," + csvField(p.axes.count(a) ? p.axes.at(a) : "");
    prefix += "," + p.status;
    for (const SampleRecord& s : store.samples(p.id)) {
      std::fprintf(out, "%s,%d,%d,%d,%lld,%s,%s\n", prefix.c_str(), s.repetition, s.rank, s.step,
                   static_cast<long long>(s.ns), optional(s.compute_ns).c_str(),
                   optional(s.collective_ns).c_str());
    }
  }
}

}  // namespace synk::harness
