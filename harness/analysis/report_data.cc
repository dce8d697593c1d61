#include "synk/harness/analysis/report_data.h"

#include <algorithm>

#include "synk/harness/base/errors.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/stats/noise.h"

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

RunData loadRun(const Store& store, int64_t run_id, const SummaryOptions& options) {
  std::optional<RunRecord> run = store.run(run_id);
  if (!run) throw BadInput("no run " + std::to_string(run_id) + " in " + store.path());
  RunData data;
  data.run = std::move(*run);
  data.status = effectiveStatus(data.run);
  for (PointRecord& p : store.points(run_id)) {
    AnalysedPoint a;
    a.record = std::move(p);
    std::vector<SampleRecord> samples = store.samples(a.record.id);
    const std::vector<RepetitionRecord> repetitions = store.repetitions(a.record.id);
    a.summary = summarizePoint(samples, repetitions, options);
    // What summarizePoint leaves out of the step statistics, the other summaries of the point
    // leave out too: its rank times and a collective's slowest rank.
    const std::vector<int> throttled =
        options.exclude_throttled ? throttledRepetitions(repetitions) : std::vector<int>{};
    auto left_out = [&](const auto& row) {
      return std::find(throttled.begin(), throttled.end(), row.repetition) != throttled.end();
    };
    if (!data.collectives()) {
      std::vector<RankTimesRecord> times = store.rankTimes(a.record.id);
      std::erase_if(times, left_out);
      a.step_times = summarizeStepTimes(times);
    }
    if (data.collectives()) {
      std::erase_if(samples, left_out);
      data.slowest_s.push_back(samples.empty() ? 0 : slowestRankMedian(samples));
      a.summary.values = slowestRankTimes(samples);
      a.summary.spread = summarize(a.summary.values);
    }
    const auto ranks = a.record.axes.find("ranks");
    a.summary.warnings =
        noiseWarnings(a.summary.values, a.summary.other_cpu,
                      ranks == a.record.axes.end() ? 1 : std::atoi(ranks->second.c_str()),
                      std::max(1, data.run.cpu_cores));
    if (a.summary.throttled_repetitions > 0) {
      a.summary.warnings.push_back(std::to_string(a.summary.throttled_repetitions) + " of " +
                                   std::to_string(repetitions.size()) +
                                   " repetition(s) ran on a throttled GPU (power " + "or heat)" +
                                   (options.exclude_throttled
                                        ? ": left out (--exclude-throttled)"
                                        : ": --exclude-throttled leaves them out"));
    }
    data.points.push_back(std::move(a));
  }
  return data;
}

int64_t resolveRunRef(const Store& store, const std::string& text) {
  const bool is_id =
      !text.empty() && text.size() < 19 &&
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

std::string pointLabel(const std::map<std::string, std::string>& axes) {
  std::string head, rest;
  for (const auto& [name, value] : axes) {
    if (name == "backend" || name == "benchmark")
      head += (head.empty() ? "" : " ") + value;
    else
      rest += " " + name + "=" + value;
  }
  return head.empty() && !rest.empty() ? rest.substr(1) : head + rest;
}

}  // namespace synk::harness
