#include "synk/harness/analysis/compare.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/analysis/report_data.h"
#include "synk/harness/base/errors.h"

namespace synk::harness {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// "key = value" lines -> key -> value.
std::map<std::string, std::string> settings(const std::string& resolved) {
  std::map<std::string, std::string> out;
  for (const std::string& line : lines(resolved)) {
    const size_t eq = line.find(" = ");
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return out;
}

// Settings that change what a point computes (its comparability key: model options, inputs,
// the step, the plugin, the axes) come first; how it was measured (repetitions, steps,
// timeouts, the seed) after: a note must lead with the setting that explains the difference.
int importance(const std::string& key) {
  static const std::set<std::string> identity = {
      "experiment.name",    "experiment.kind",     "experiment.plugin", "experiment.step",
      "experiment.scaling", "experiment.blocking", "experiment.timing"};
  if (key.rfind("experiment.", 0) != 0 || identity.count(key)) return 0;
  return 1;
}

// The resolved-configuration settings that differ ("model.lr: 0.1 -> 0.5", "+model.wd = 1"),
// leaving out the compare thresholds (they decide how runs are compared, not what was measured);
// what changes the computation first, at most four, then how many more and which.
std::string configDifference(const RunRecord& a, const RunRecord& b) {
  const auto left = settings(a.config_resolved), right = settings(b.config_resolved);
  std::vector<std::pair<int, std::string>> differ;  // importance, text
  std::vector<std::string> keys;
  for (const auto& [key, value] : left)
    keys.push_back(key);
  for (const auto& [key, value] : right)
    if (!left.count(key)) keys.push_back(key);
  for (const std::string& key : keys) {
    if (key.rfind("compare.", 0) == 0) continue;
    const auto l = left.find(key), r = right.find(key);
    std::string text;
    if (l == left.end()) {
      text = "+" + key + " = " + r->second;
    } else if (r == right.end()) {
      text = "-" + key + " = " + l->second;
    } else if (l->second != r->second) {
      text = key + ": " + l->second + " -> " + r->second;
    } else {
      continue;
    }
    differ.push_back({importance(key), text});
  }
  std::stable_sort(differ.begin(), differ.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  if (differ.empty()) return a.experiment == b.experiment ? "the comparability keys differ" : "";
  constexpr size_t kShown = 4;
  std::string out;
  for (size_t i = 0; i < differ.size() && i < kShown; ++i)
    out += (i ? "; " : "") + differ[i].second;
  if (differ.size() > kShown) {
    out += "; and " + std::to_string(differ.size() - kShown) + " more (";
    for (size_t i = kShown; i < differ.size(); ++i) {
      const std::string& t = differ[i].second;
      const size_t end = t.find_first_of(":= ");
      out += (i > kShown ? ", " : "") + t.substr(t[0] == '+' || t[0] == '-' ? 1 : 0,
                                                 end - (t[0] == '+' || t[0] == '-' ? 1 : 0));
    }
    out += ")";
  }
  return out;
}

std::string statusReason(const char* side, const PointRecord& p) {
  return std::string(side) + " point " + statusText(p.status, p.reason);
}

const PointRecord* referencePoint(const std::vector<PointRecord>& points, const PointRecord& p) {
  std::map<std::string, std::string> want = p.axes;
  want["ranks"] = "1";
  for (const PointRecord& q : points)
    if (q.axes == want && q.status == PointStatus::ok) return &q;
  return nullptr;
}

// The speedup change of a compared train point against each run's 1-rank point.
std::optional<ScalingCompare> scalingCompare(const Store& store, const RunCompare& rc,
                                             const std::vector<PointRecord>& base_points,
                                             const std::vector<PointRecord>& cand_points,
                                             const PointCompare& row, const PointRecord& base,
                                             const PointRecord& cand) {
  const auto ranks_axis = row.axes.find("ranks");
  if (rc.baseline.kind != "train" || ranks_axis == row.axes.end()) return std::nullopt;
  const int ranks = std::atoi(ranks_axis->second.c_str());
  const PointRecord* base_ref = referencePoint(base_points, base);
  const PointRecord* cand_ref = referencePoint(cand_points, cand);
  if (ranks <= 1 || !base_ref || !cand_ref) return std::nullopt;
  const bool weak = runScaling(rc.baseline) == Scaling::Weak;
  const ScalingSamples b{repetitionValues(store, *base_ref, "train"), row.baseline_values, ranks, 1,
                         weak};
  const ScalingSamples c{repetitionValues(store, *cand_ref, "train"), row.candidate_values, ranks,
                         1, weak};
  const auto enough = [&](const std::vector<double>& v) {
    return int(v.size()) >= rc.thresholds.min_repetitions &&
           std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  if (!enough(b.reference) || !enough(b.point) || !enough(c.reference) || !enough(c.point))
    return std::nullopt;
  BootstrapOptions options;
  options.seed = seedFor(base.key, cand.key);
  return ScalingCompare{ranks, scalingChange(b, c, rc.thresholds.min_change, options)};
}

}  // namespace

RegressionThresholds runThresholds(const RunRecord& run) {
  RegressionThresholds t;
  for (const std::string& line : lines(run.config_resolved)) {
    const size_t eq = line.find(" = ");
    if (line.rfind("compare.", 0) != 0 || eq == std::string::npos) continue;
    const std::string key = line.substr(8, eq - 8);
    const double value = std::atof(line.c_str() + eq + 3);
    if (key == "min_change") t.min_change = value;
    if (key == "noise_factor") t.noise_factor = value;
    if (key == "q") t.q = value;
    if (key == "min_repetitions") t.min_repetitions = int(value);
  }
  return t;
}

std::string machineDifference(const RunRecord& a, const RunRecord& b) {
  std::string out;
  auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) out += (out.empty() ? "" : "; ") + std::string(name) + ": " + x + " vs " + y;
  };
  auto gpus = [](const RunRecord& r) {
    return r.gpu_count ? std::to_string(r.gpu_count) + " x " + r.gpu_model : std::string("none");
  };
  field("cpu", a.cpu_model + " (" + std::to_string(a.cpu_cores) + " threads)",
        b.cpu_model + " (" + std::to_string(b.cpu_cores) + " threads)");
  field("memory", std::to_string((a.memory_bytes + (1 << 29)) >> 30) + " GiB",
        std::to_string((b.memory_bytes + (1 << 29)) >> 30) + " GiB");
  field("gpus", gpus(a), gpus(b));
  field("driver", a.driver_version, b.driver_version);
  field("cuda", a.cuda_version, b.cuda_version);
  field("nccl", a.nccl_version, b.nccl_version);
  field("build", a.build_type, b.build_type);
  if (out.empty() && a.machine_key != b.machine_key) out = "machine keys differ";
  return out;
}

std::vector<double> repetitionValues(const Store& store, const PointRecord& point,
                                     const std::string& kind, const SummaryOptions& options) {
  std::vector<SampleRecord> samples = store.samples(point.id);
  const std::vector<RepetitionRecord> repetitions = store.repetitions(point.id);
  if (kind == "collectives") {
    if (options.exclude_throttled) {
      const std::vector<int> throttled = throttledRepetitions(repetitions);
      std::erase_if(samples, [&](const SampleRecord& s) {
        return std::find(throttled.begin(), throttled.end(), s.repetition) != throttled.end();
      });
    }
    return slowestRankRepetitionMedians(samples);
  }
  return summarizePoint(samples, repetitions, options).repetition_medians;
}

namespace {

// A train point's joules per sample (median energy per step of every GPU it used, over the
// rows one step processes), where NVML measured it.
std::optional<double> joulesPerSample(const Store& store, const RunRecord& run,
                                      const PointRecord& point, const SummaryOptions& options) {
  if (run.kind != "train") return std::nullopt;
  const PointSummary s = summarizePoint({}, store.repetitions(point.id), options);
  const auto axis = [&](const char* name) {
    const auto found = point.axes.find(name);
    return found == point.axes.end() ? int64_t{0} : std::atoll(found->second.c_str());
  };
  const int64_t rows =
      runScaling(run) == Scaling::Weak ? axis("batch") * axis("ranks") : axis("batch");
  if (!s.energy_per_step_j || rows <= 0) return std::nullopt;
  return *s.energy_per_step_j / double(rows);
}

}  // namespace

int RunCompare::count(Verdict verdict) const {
  return static_cast<int>(std::count_if(points.begin(), points.end(), [&](const PointCompare& p) {
    return p.result.verdict == verdict;
  }));
}

RunCompare compareRuns(const Store& store, int64_t baseline, int64_t candidate,
                       const CompareOptions& options) {
  RunCompare rc;
  for (auto [id, record] :
       {std::pair{baseline, &rc.baseline}, std::pair{candidate, &rc.candidate}}) {
    std::optional<RunRecord> run = store.run(id);
    if (!run) throw BadInput("no run " + std::to_string(id) + " in " + store.path());
    *record = std::move(*run);
  }
  const RunRecord &b = rc.baseline, &c = rc.candidate;
  if (b.kind != c.kind) {
    throw BadInput("run " + std::to_string(b.id) + " is a " + b.kind + " run and run " +
                   std::to_string(c.id) + " a " + c.kind + " run: nothing in them compares");
  }
  rc.baseline_status = effectiveStatus(b);
  rc.candidate_status = effectiveStatus(c);
  rc.thresholds = runThresholds(b);
  if (options.min_change) rc.thresholds.min_change = *options.min_change;
  if (options.noise_factor) rc.thresholds.noise_factor = *options.noise_factor;
  if (options.q) rc.thresholds.q = *options.q;
  if (options.min_repetitions) rc.thresholds.min_repetitions = *options.min_repetitions;
  rc.thresholds.strict = options.strict;
  rc.forced = options.force;

  const std::string machines = machineDifference(b, c);
  const char* consequence = options.force ? "compared anyway (--force)"
                                          : "its points are incomparable (--force compares them)";
  if (!machines.empty()) rc.notes.push_back("another machine: " + machines + "; " + consequence);
  if (b.experiment != c.experiment) {
    rc.notes.push_back("another experiment: " + b.experiment + " vs " + c.experiment + "; " +
                       consequence);
  }
  for (const auto& [run, status, side] : {std::tuple{&b, &rc.baseline_status, "baseline"},
                                          std::tuple{&c, &rc.candidate_status, "candidate"}}) {
    if (*status == "complete") continue;
    rc.incomplete = true;
    rc.notes.push_back(std::string("the ") + side + " run " + std::to_string(run->id) + " is " +
                       *status + (run->message.empty() ? "" : " (" + run->message + ")") +
                       ": the compare is incomplete");
  }

  const std::vector<PointRecord> base_points = store.points(b.id), cand_points = store.points(c.id);
  std::vector<std::pair<const PointRecord*, const PointRecord*>> pairs;
  std::set<const PointRecord*> matched;
  for (const PointRecord& p : base_points) {
    const auto found = std::find_if(cand_points.begin(), cand_points.end(),
                                    [&](const PointRecord& q) { return q.axes == p.axes; });
    const PointRecord* q = found == cand_points.end() ? nullptr : &*found;
    if (q) matched.insert(q);
    pairs.push_back({&p, q});
  }
  for (const PointRecord& q : cand_points)
    if (!matched.count(&q)) pairs.push_back({nullptr, &q});

  std::vector<PointSamples> samples;
  std::vector<std::pair<const PointRecord*, const PointRecord*>> listed;
  for (const auto& [base, cand] : pairs) {
    // A point skipped by plan (no GPU here, ...) where the other side did not measure it either.
    const bool base_skip = !base || base->status == PointStatus::skipped;
    const bool cand_skip = !cand || cand->status == PointStatus::skipped;
    if (base_skip && cand_skip) {
      ++rc.skipped_in_both;
      continue;
    }
    PointCompare row;
    row.axes = (base ? base : cand)->axes;
    row.label = pointLabel(row.axes);
    PointSamples s;
    if (!cand) {
      s.incomparable = "only in the baseline run";
    } else if (!base) {
      s.incomparable = "only in the candidate run";
    } else if (base->status != PointStatus::ok) {
      s.incomparable = statusReason("baseline", *base);
    } else if (cand->status != PointStatus::ok) {
      s.incomparable = statusReason("candidate", *cand);
    } else if (base->key != cand->key && !options.force) {
      s.incomparable = !machines.empty() ? "another machine"
                                         : "another configuration: " + configDifference(b, c);
    }
    if (!cand || !base) rc.incomplete = true;
    if (base) row.baseline_key = base->key;
    if (cand) row.candidate_key = cand->key;
    if (base && cand && s.incomparable.empty()) {
      row.forced = base->key != cand->key;
      const SummaryOptions summary{.exclude_throttled = options.exclude_throttled};
      row.baseline_values = s.baseline = repetitionValues(store, *base, b.kind, summary);
      row.candidate_values = s.candidate = repetitionValues(store, *cand, c.kind, summary);
      row.baseline_joules_per_sample = joulesPerSample(store, b, *base, summary);
      row.candidate_joules_per_sample = joulesPerSample(store, c, *cand, summary);
    }
    samples.push_back(std::move(s));
    rc.points.push_back(std::move(row));
    listed.push_back({base, cand});
  }
  const std::vector<PointComparison> results = comparePoints(samples, rc.thresholds);
  for (size_t i = 0; i < results.size(); ++i) {
    PointCompare& row = rc.points[i];
    row.result = results[i];
    if (row.result.verdict != Verdict::Incomparable)
      row.scaling = scalingCompare(store, rc, base_points, cand_points, row, *listed[i].first,
                                   *listed[i].second);
  }
  if (rc.skipped_in_both > 0) {
    rc.notes.push_back(std::to_string(rc.skipped_in_both) +
                       " point(s) skipped in both runs (not runnable on their machines)");
  }
  rc.exit_code = compareExit(results, options.fail_on_improvement);
  if (rc.points.empty()) rc.notes.push_back("no point was measured in either run");
  if (rc.exit_code == kExitOk && (rc.incomplete || rc.points.empty()))
    rc.exit_code = kExitRunFailed;
  return rc;
}

}  // namespace synk::harness
