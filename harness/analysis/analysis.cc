#include "synk/harness/analysis/analysis.h"

#include <algorithm>

namespace synk::harness {
namespace {

int64_t axisInt(const PointRecord& p, const std::string& name) {
  const auto found = p.axes.find(name);
  return found == p.axes.end() ? 0 : std::atoll(found->second.c_str());
}

// Every axis except ranks and batch: what a baseline must share.
std::map<std::string, std::string> otherAxes(const PointRecord& p) {
  std::map<std::string, std::string> rest = p.axes;
  rest.erase("ranks");
  rest.erase("batch");
  // A launched point's ranks are nodes x ranks per node: its speedup is over the session's
  // ranks, against the 1-rank point (1 node x 1 rank), wherever they sit.
  rest.erase("nodes");
  rest.erase("ranks_per_node");
  return rest;
}

// (repetition, iteration) -> the slowest rank's time.
std::map<std::pair<int, int>, int64_t> slowestPerIteration(
    const std::vector<SampleRecord>& samples) {
  std::map<std::pair<int, int>, int64_t> slowest;
  for (const SampleRecord& r : samples) {
    int64_t& v = slowest[{r.repetition, r.step}];
    v = std::max(v, r.ns);
  }
  return slowest;
}

}  // namespace

std::vector<int> throttledRepetitions(const std::vector<RepetitionRecord>& repetitions) {
  std::vector<int> out;
  for (const RepetitionRecord& r : repetitions) {
    if (std::any_of(r.gpus.begin(), r.gpus.end(),
                    [](const GpuReading& g) { return g.throttled(); }))
      out.push_back(r.repetition);
  }
  return out;
}

PointSummary summarizePoint(const std::vector<SampleRecord>& samples,
                            const std::vector<RepetitionRecord>& repetitions,
                            const SummaryOptions& options) {
  PointSummary s;
  const std::vector<int> throttled = throttledRepetitions(repetitions);
  s.throttled_repetitions = static_cast<int>(throttled.size());
  auto left_out = [&](int repetition) {
    return options.exclude_throttled &&
           std::find(throttled.begin(), throttled.end(), repetition) != throttled.end();
  };
  if (options.exclude_throttled) s.excluded_repetitions = s.throttled_repetitions;
  std::map<int, std::vector<double>> by_rep;
  std::vector<double> compute, collective, startup;
  for (const SampleRecord& r : samples) {
    if (r.rank != options.rank || left_out(r.repetition)) continue;
    by_rep[r.repetition].push_back(nanosToSeconds(r.ns));
    if (r.compute_ns != kNoValue) compute.push_back(nanosToSeconds(r.compute_ns));
    if (r.collective_ns != kNoValue) collective.push_back(nanosToSeconds(r.collective_ns));
    ++s.samples;
  }
  std::map<int, double> rep_step;  // each repetition's median step, for its energy per step
  for (auto& [rep, values] : by_rep) {
    s.repetition_medians.push_back(median(std::move(values)));
    rep_step[rep] = s.repetition_medians.back();
  }
  // Repetitions that carry their own value (imported Google Benchmark ones) are summarised by
  // it: their samples hold it in whole nanoseconds only.
  if (!repetitions.empty() &&
      std::all_of(repetitions.begin(), repetitions.end(),
                  [](const RepetitionRecord& r) { return r.value.has_value(); })) {
    s.repetition_medians.clear();
    for (const RepetitionRecord& r : repetitions)
      if (!left_out(r.repetition)) s.repetition_medians.push_back(*r.value);
  }
  s.step_s = median(s.repetition_medians);
  s.values = s.repetition_medians;
  s.spread = summarize(s.values);
  double other = 0;
  int measured = 0;
  std::vector<double> energy, power, clock;
  for (const RepetitionRecord& r : repetitions) {
    if (left_out(r.repetition)) continue;
    if (r.other_cpu) other += *r.other_cpu, ++measured;
    if (r.gpus.empty() || r.steps <= 0) continue;
    double joules = 0, watts = 0, mhz = 0;
    int with_energy = 0, with_clock = 0;
    for (const GpuReading& g : r.gpus) {
      if (g.energy_j) joules += *g.energy_j, ++with_energy;
      if (g.power_w) watts += *g.power_w;
      if (g.sm_mhz) mhz += *g.sm_mhz, ++with_clock;
    }
    ++s.gpu_repetitions;
    if (with_energy == static_cast<int>(r.gpus.size())) {
      // The power over the read window (the timed phase, gpu_telemetry.h) times the median
      // step; without timed samples, the window's energy per step.
      const auto step = rep_step.find(r.repetition);
      const bool timed = step != rep_step.end() && watts > 0 && !r.value;
      energy.push_back(timed ? watts * step->second : joules / double(r.steps));
      power.push_back(watts);
    }
    if (with_clock > 0) clock.push_back(mhz / with_clock);
  }
  if (measured > 0) s.other_cpu = other / measured;
  if (!energy.empty()) {
    s.energy_per_step_j = median(energy);
    s.energy_min_j = *std::min_element(energy.begin(), energy.end());
    s.energy_max_j = *std::max_element(energy.begin(), energy.end());
  }
  if (!power.empty()) s.power_w = median(power);
  if (!clock.empty()) s.sm_mhz = median(clock);
  if (!compute.empty()) s.compute_s = median(std::move(compute));
  if (!collective.empty()) s.collective_s = median(std::move(collective));
  for (const RepetitionRecord& r : repetitions) {
    if (r.startup_ns > 0) startup.push_back(nanosToSeconds(r.startup_ns));
  }
  if (!startup.empty()) {
    s.startup_min_s = *std::min_element(startup.begin(), startup.end());
    s.startup_max_s = *std::max_element(startup.begin(), startup.end());
    s.startup_s = median(std::move(startup));
  }
  return s;
}

std::vector<double> slowestRankRepetitionMedians(const std::vector<SampleRecord>& samples) {
  std::map<int, std::vector<double>> by_rep;
  for (const auto& [at, ns] : slowestPerIteration(samples))
    by_rep[at.first].push_back(nanosToSeconds(ns));
  std::vector<double> out;
  for (auto& [rep, values] : by_rep)
    out.push_back(median(std::move(values)));
  return out;
}

std::vector<double> slowestRankTimes(const std::vector<SampleRecord>& samples) {
  std::vector<double> out;
  for (const auto& [at, ns] : slowestPerIteration(samples))
    out.push_back(nanosToSeconds(ns));
  return out;
}

double slowestRankMedian(const std::vector<SampleRecord>& samples) {
  std::vector<double> values;
  for (const auto& [at, ns] : slowestPerIteration(samples))
    values.push_back(nanosToSeconds(ns));
  return median(std::move(values));
}

std::vector<ScalingRow> scalingRows(const std::vector<AnalysedPoint>& points, Scaling run_scaling,
                                    Scaling report_scaling) {
  std::vector<ScalingRow> rows;
  for (const AnalysedPoint& a : points) {
    ScalingRow row;
    row.point = &a.record;
    row.ranks = static_cast<int>(axisInt(a.record, "ranks"));
    row.batch = axisInt(a.record, "batch");
    row.rows = run_scaling == Scaling::Weak ? row.batch * row.ranks : row.batch;
    row.step_s = a.summary.step_s;
    row.compute_s = a.summary.compute_s;
    row.collective_s = a.summary.collective_s;
    row.startup_s = a.summary.startup_s;
    if (row.step_s > 0) row.samples_per_s = double(row.rows) / row.step_s;
    if (a.summary.energy_per_step_j && *a.summary.energy_per_step_j > 0 && row.rows > 0) {
      row.joules_per_sample = *a.summary.energy_per_step_j / double(row.rows);
      row.samples_per_joule = 1.0 / *row.joules_per_sample;
    }
    rows.push_back(row);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    ScalingRow& row = rows[i];
    if (row.step_s <= 0) continue;
    const auto others = otherAxes(*row.point);
    for (size_t j = 0; j < rows.size(); ++j) {
      const ScalingRow& base = rows[j];
      if (base.ranks != 1 || base.step_s <= 0 || otherAxes(*base.point) != others) continue;
      const bool same = report_scaling == Scaling::Weak
                            ? base.rows == row.rows / std::max(1, row.ranks) &&
                                  row.rows % std::max(1, row.ranks) == 0
                            : base.rows == row.rows;
      if (!same) continue;
      const double factor = report_scaling == Scaling::Weak ? row.ranks : 1.0;
      row.speedup = factor * base.step_s / row.step_s;
      row.efficiency = *row.speedup / row.ranks;
      if (base.joules_per_sample && row.joules_per_sample) {
        row.energy_scaling = *base.joules_per_sample / *row.joules_per_sample;
      }
      BootstrapOptions options;
      options.seed = seedFor(base.point->key, row.point->key);
      const auto ci = bootstrapRatioOfMedians(points[j].summary.repetition_medians,
                                              points[i].summary.repetition_medians, options);
      if (ci) row.speedup_ci = Interval{factor * ci->low, factor * ci->high};
      break;
    }
  }
  return rows;
}

Scaling runScaling(const RunRecord& run) {
  return run.config_resolved.find("experiment.scaling = strong") != std::string::npos
             ? Scaling::Strong
             : Scaling::Weak;
}

}  // namespace synk::harness
