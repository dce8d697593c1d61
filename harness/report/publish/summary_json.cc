#include "synk/harness/report/publish/summary_json.h"

#include "synk/harness/report/text/collectives_table.h"
#include "synk/harness/stats/measure.h"

namespace synk::harness {
namespace {

OrderedJson optionalNumber(const std::optional<double>& v) {
  return v ? jsonNumber(*v) : OrderedJson(nullptr);
}

std::string axis(const PointRecord& p, const char* name) {
  const auto found = p.axes.find(name);
  return found == p.axes.end() ? "" : found->second;
}

// The steps the HTML report's timeline draws, every rank's parts in seconds; null without.
OrderedJson timelineJson(const std::optional<StepTimesSummary>& times) {
  if (!times) return nullptr;
  OrderedJson steps = OrderedJson::array();
  for (const TimelineStep& step : times->timeline) {
    OrderedJson ranks = OrderedJson::array();
    for (const RankTimesRecord& r : step.ranks) {
      ranks.push_back({{"rank", r.rank},
                       {"work_s", jsonNumber(nanosToSeconds(r.work_ns))},
                       {"device_s", r.device_ns >= 0 ? jsonNumber(nanosToSeconds(r.device_ns))
                                                     : OrderedJson(nullptr)},
                       {"path_s", jsonNumber(nanosToSeconds(r.path_ns))},
                       {"wait_s", jsonNumber(nanosToSeconds(r.wait_ns))},
                       {"step_s", jsonNumber(nanosToSeconds(r.step_ns))}});
    }
    steps.push_back({{"which", step.which},
                     {"repetition", step.repetition},
                     {"step", step.step},
                     {"step_s", jsonNumber(step.step_s)},
                     {"ranks", std::move(ranks)}});
  }
  return steps;
}

}  // namespace

OrderedJson runJson(const RunData& data) {
  const RunRecord& r = data.run;
  return {{"id", r.id},
          {"experiment", r.experiment},
          {"kind", r.kind},
          {"tag", r.tag},
          {"status", data.status},
          {"message", r.message},
          {"started_at", r.started_at},
          {"ended_at", r.ended_at},
          {"commit", r.commit},
          {"dirty", r.dirty},
          {"build_type", r.build_type},
          {"host", r.host},
          {"cpu_model", r.cpu_model},
          {"cpu_threads", r.cpu_cores},
          {"memory_bytes", r.memory_bytes},
          {"gpu_model", r.gpu_model},
          {"gpu_count", r.gpu_count},
          {"gpu_topology", r.gpu_topology},
          {"driver_version", r.driver_version},
          {"cuda_version", r.cuda_version},
          {"nccl_version", r.nccl_version},
          {"machine_key", r.machine_key},
          {"conditions", r.conditions},
          {"telemetry", r.telemetry},
          {"config_file", r.config_file},
          {"config_text", r.config_text},
          {"config_resolved", r.config_resolved},
          {"command_line", r.command_line}};
}

OrderedJson pointSummaryJson(const RunData& data, size_t point,
                             const std::vector<ScalingRow>& rows) {
  const AnalysedPoint& a = data.points[point];
  const PointSummary& s = a.summary;
  const Summary& v = s.spread;
  const bool measured = v.n > 0;
  auto stat = [&](double x) { return measured ? jsonNumber(x) : OrderedJson(nullptr); };
  OrderedJson out = {
      {"over", data.collectives() ? "the slowest rank's time per repetition (back to back) or "
                                    "per iteration"
                                  : "the repetitions' median step times"},
      {"unit", "s"},
      {"n", v.n},
      {"median", stat(v.median)},
      {"mean", stat(v.mean)},
      {"stdev", v.n > 1 ? jsonNumber(v.stdev) : OrderedJson(nullptr)},
      {"min", stat(v.min)},
      {"q1", stat(v.q1)},
      {"q3", stat(v.q3)},
      {"max", stat(v.max)}};
  if (data.collectives()) {
    const CollectiveShape shape =
        collectiveShape(collectiveOf(a.record).value_or(Collective::AllReduce),
                        std::atoll(axis(a.record, "bytes").c_str()),
                        std::max(1, std::atoi(axis(a.record, "ranks").c_str())),
                        parseDType(axis(a.record, "dtype")));
    const double time = point < data.slowest_s.size() ? data.slowest_s[point] : 0;
    out["time_s"] = time > 0 ? jsonNumber(time) : OrderedJson(nullptr);
    out["size_bytes"] = shape.bytes();
    out["count"] = shape.part;
    if (time > 0) {
      const double algbw = double(shape.bytes()) / time * 1e-9;
      out["algbw_GBps"] = jsonNumber(algbw);
      out["busbw_GBps"] =
          jsonNumber(algbw * busbwFactorOf(collectiveOf(a.record),
                                           std::atoi(axis(a.record, "ranks").c_str())));
    }
  } else if (point < rows.size()) {
    const ScalingRow& row = rows[point];
    out["step_s"] = row.step_s > 0 ? jsonNumber(row.step_s) : OrderedJson(nullptr);
    out["samples_per_step"] = row.rows;
    out["samples_per_s"] = row.step_s > 0 ? jsonNumber(row.samples_per_s) : OrderedJson(nullptr);
    out["speedup"] = optionalNumber(row.speedup);
    out["speedup_ci95"] = row.speedup_ci ? OrderedJson::array({jsonNumber(row.speedup_ci->low),
                                                               jsonNumber(row.speedup_ci->high)})
                                         : OrderedJson(nullptr);
    out["efficiency"] = optionalNumber(row.efficiency);
    out["joules_per_sample"] = optionalNumber(row.joules_per_sample);
    out["samples_per_joule"] = optionalNumber(row.samples_per_joule);
    out["energy_scaling"] = optionalNumber(row.energy_scaling);
    out["compute_s"] = optionalNumber(row.compute_s);
    out["collective_s"] = optionalNumber(row.collective_s);
    out["startup_s"] = optionalNumber(row.startup_s);
    // Each rank's step by phase (experiment.step_times), and the straggler if there is one.
    OrderedJson ranks = nullptr, straggler = nullptr;
    if (const std::optional<StepTimesSummary>& t = a.step_times) {
      ranks = OrderedJson::array();
      for (const RankTimesSummary& r : t->ranks) {
        ranks.push_back({{"rank", r.rank},
                         {"work_s", jsonNumber(r.work_s)},
                         {"device_s", optionalNumber(r.device_s)},
                         {"path_s", jsonNumber(r.path_s)},
                         {"wait_s", jsonNumber(r.wait_s)},
                         {"step_s", jsonNumber(r.step_s)}});
      }
      if (t->straggler) {
        straggler = {{"rank", t->straggler->rank},
                     {"slowest_share", jsonNumber(t->straggler->slowest_share)},
                     {"work_s", jsonNumber(t->straggler->work_s)},
                     {"others_work_s", jsonNumber(t->straggler->others_s)}};
      }
    }
    out["rank_times"] = std::move(ranks);
    out["straggler"] = std::move(straggler);
    out["timeline"] = timelineJson(a.step_times);
  }
  out["energy_per_step_j"] = optionalNumber(s.energy_per_step_j);
  out["gpu_power_w"] = optionalNumber(s.power_w);
  out["sm_mhz"] = optionalNumber(s.sm_mhz);
  out["throttled_repetitions"] = s.throttled_repetitions;
  out["excluded_repetitions"] = s.excluded_repetitions;
  out["other_cpu"] = optionalNumber(s.other_cpu);
  out["warnings"] = s.warnings;
  return out;
}

OrderedJson repetitionJson(const RepetitionRecord& r) {
  OrderedJson gpus = OrderedJson::array();
  for (const GpuReading& g : r.gpus) {
    gpus.push_back({{"gpu", g.gpu},
                    {"seconds", jsonNumber(g.seconds)},
                    {"sm_mhz", optionalNumber(g.sm_mhz)},
                    {"memory_mhz", optionalNumber(g.memory_mhz)},
                    {"power_w", optionalNumber(g.power_w)},
                    {"energy_j", optionalNumber(g.energy_j)},
                    {"temperature_c", optionalNumber(g.temperature_c)},
                    {"throttle_reasons", g.throttle_reasons},
                    {"throttled_s", optionalNumber(g.throttled_s)},
                    {"throttled", g.throttled()}});
  }
  OrderedJson out = {{"repetition", r.repetition},
                     {"startup_ns", r.startup_ns},
                     {"steps", r.steps},
                     {"status", toString(r.status)},
                     {"message", r.message},
                     {"value_s", optionalNumber(r.value)},
                     {"other_cpu", optionalNumber(r.other_cpu)},
                     {"gpus", std::move(gpus)}};
  if (!r.hosts.empty()) out["hosts"] = r.hosts;  // launched: the nodes' hosts, in node order
  return out;
}

}  // namespace synk::harness
