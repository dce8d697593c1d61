#include "synk/harness/report_data.h"

#include <algorithm>

#include "synk/harness/context.h"
#include "synk/harness/errors.h"

namespace synk::harness {

std::string effectiveStatus(const RunRecord& run) {
  if (run.status != "running") return run.status;
  ProcessIdentity writer;
  writer.pid = run.process_id;
  writer.boot_id = run.boot_id;
  writer.start = run.process_start;
  writer.host = run.host;
  const std::optional<bool> alive = processAlive(writer);
  if (!alive) return "running (on " + run.host + ")";
  return *alive ? "running" : "failed";
}

RunData loadRun(const Store& store, int64_t run_id) {
  std::optional<RunRecord> run = store.run(run_id);
  if (!run) throw BadInput("no run " + std::to_string(run_id) + " in " + store.path());
  RunData data;
  data.run = std::move(*run);
  data.status = effectiveStatus(data.run);
  for (PointRecord& p : store.points(run_id)) {
    AnalysedPoint a;
    a.record = std::move(p);
    const std::vector<SampleRecord> samples = store.samples(a.record.id);
    if (data.collectives()) {
      data.slowest_s.push_back(samples.empty() ? 0 : slowestRankMedian(samples));
    }
    a.summary = summarizePoint(samples, store.repetitions(a.record.id));
    data.points.push_back(std::move(a));
  }
  return data;
}

int64_t resolveRunRef(const Store& store, const std::string& text) {
  const bool is_id = !text.empty() && text.size() < 19 &&
                     std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (is_id) {
    const int64_t id = std::atoll(text.c_str());
    if (!store.run(id)) throw BadInput("no run " + text + " in " + store.path());
    return id;
  }
  if (text.empty() || text == "latest") {
    const std::vector<RunRecord> runs = store.runs();
    if (runs.empty()) throw BadInput(store.path() + " holds no run yet");
    return runs.front().id;
  }
  if (const auto named = store.baseline(text)) return *named;
  for (const RunRecord& run : store.runs())  // newest first
    if (run.tag == text) return run.id;
  std::string known;
  for (const auto& [name, run] : store.baselines())
    known += (known.empty() ? "" : ", ") + name;
  throw BadInput("'" + text + "' is no run id, baseline or tag in " + store.path() +
                 (known.empty() ? " (no baselines named yet)" : " (baselines: " + known + ")"));
}

}  // namespace synk::harness
