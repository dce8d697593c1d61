#include "synk/harness/analysis/step_times.h"

#include <algorithm>
#include <map>
#include <utility>

#include "synk/harness/base/text_table.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {
namespace {

// What a rank's own work cost in a step: its GPU's time where measured, else the host's.
double workOf(const RankTimesRecord& t) {
  return nanosToSeconds(t.device_ns >= 0 ? t.device_ns : t.work_ns);
}

}  // namespace

std::optional<StepTimesSummary> summarizeStepTimes(const std::vector<RankTimesRecord>& times) {
  if (times.empty()) return std::nullopt;
  struct Columns {
    std::vector<double> work, device, path, wait, step, own;
  };
  std::map<int, Columns> by_rank;
  std::map<std::pair<int, int>, std::pair<double, int>> slowest;  // (rep, step) -> (work, rank)
  for (const RankTimesRecord& t : times) {
    Columns& c = by_rank[t.rank];
    c.work.push_back(nanosToSeconds(t.work_ns));
    if (t.device_ns >= 0) c.device.push_back(nanosToSeconds(t.device_ns));
    c.path.push_back(nanosToSeconds(t.path_ns));
    c.wait.push_back(nanosToSeconds(t.wait_ns));
    c.step.push_back(nanosToSeconds(t.step_ns));
    c.own.push_back(workOf(t));
    auto [it, fresh] = slowest.try_emplace({t.repetition, t.step}, workOf(t), t.rank);
    if (!fresh && workOf(t) > it->second.first) it->second = {workOf(t), t.rank};
  }
  StepTimesSummary s;
  for (auto& [rank, c] : by_rank) {
    RankTimesSummary r;
    r.rank = rank;
    r.work_s = median(c.work);
    if (!c.device.empty()) r.device_s = median(c.device);
    r.path_s = median(c.path);
    r.wait_s = median(c.wait);
    r.step_s = median(c.step);
    s.ranks.push_back(r);
  }
  if (by_rank.size() < 2) {
    s.timeline = timelineSteps(times);
    return s;
  }
  std::map<int, int> firsts;
  for (const auto& [step, work_rank] : slowest)
    ++firsts[work_rank.second];
  const auto [rank, count] =
      *std::max_element(firsts.begin(), firsts.end(),
                        [](const auto& a, const auto& b) { return a.second < b.second; });
  const double share = double(count) / double(slowest.size());
  std::vector<double> others;
  for (const auto& [r, c] : by_rank)
    if (r != rank) others.insert(others.end(), c.own.begin(), c.own.end());
  const double mine = median(by_rank.at(rank).own), theirs = median(others);
  if (share >= kStragglerShare && theirs > 0 && mine >= theirs * (1 + kStragglerExcess)) {
    s.straggler = Straggler{rank, share, mine / theirs - 1, mine, theirs};
  }
  s.timeline = timelineSteps(times);
  return s;
}

std::string stragglerText(const Straggler& s) {
  return "rank " + std::to_string(s.rank) + " is a straggler: its work took longest in " +
         formatFixed(s.slowest_share * 100, 0) + " % of the steps (median " +
         formatSeconds(s.work_s) + " against the others' " + formatSeconds(s.others_s) + ")";
}

}  // namespace synk::harness
