#include "synk/harness/analysis/estimate.h"

#include <algorithm>
#include <set>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/base/progress.h"

namespace synk::harness {

PlanEstimate estimatePlan(const Experiment& e, const Plan& plan, const Store& store) {
  PlanEstimate out;
  std::set<int> jobs_started;  // collectives: a job's start-up counts once per repetition
  for (const Point& p : plan.points) {
    if (p.skipped) continue;
    const std::vector<PointRecord> earlier = store.pointsWithKey(p.key);
    const auto newest = std::find_if(earlier.rbegin(), earlier.rend(), [](const PointRecord& r) {
      return r.status == PointStatus::ok;
    });
    if (newest == earlier.rend()) {
      ++out.unknown;
      continue;
    }
    const std::vector<SampleRecord> samples = store.samples(newest->id);
    const std::vector<RepetitionRecord> repetitions = store.repetitions(newest->id);
    const PointSummary s = summarizePoint(samples, repetitions);
    const double startup = s.startup_s.value_or(0);
    double repetition = 0;
    if (e.kind == ExperimentKind::Collectives) {
      const double iteration = samples.empty() ? 0 : slowestRankMedian(samples);
      repetition = iteration * (e.warmup + e.steps + e.check_iterations);
      if (jobs_started.insert(p.job).second) repetition += startup;
    } else {
      repetition = startup + s.step_s * (e.warmup + e.steps);
    }
    out.seconds += repetition * e.repetitions;
    ++out.known;
  }
  return out;
}

std::string PlanEstimate::describe(const std::string& db) const {
  if (known == 0) {
    return "no estimate: none of the " + std::to_string(unknown) +
           " runnable point(s) was measured on this kind of machine in " + db +
           " (a first run measures them)";
  }
  std::string out = "about " + formatDuration(seconds) + " for " + std::to_string(known) + " of " +
                    std::to_string(known + unknown) + " runnable point(s) (earlier runs in " + db +
                    ")";
  if (unknown > 0)
    out += "; " + std::to_string(unknown) + " never measured on this kind of machine";
  return out;
}

}  // namespace synk::harness
