// timelineSteps (step_times.h): the median repetition's median and slowest steps, rank by rank.
#include <algorithm>
#include <map>
#include <utility>

#include "synk/harness/analysis/step_times.h"

namespace synk::harness {
namespace {

struct StepRanks {
  int64_t slowest_ns = 0;  // the step of its slowest rank
  std::vector<RankTimesRecord> ranks;
};

// The lower median of `order` by `less`: the element a median names, not a mean of two.
template <typename T, typename Less>
const T& lowerMedian(std::vector<T>& order, Less less) {
  std::stable_sort(order.begin(), order.end(), less);
  return order[(order.size() - 1) / 2];
}

}  // namespace

std::vector<TimelineStep> timelineSteps(const std::vector<RankTimesRecord>& times) {
  // repetition -> step -> its ranks (std::map: in repetition and step order).
  std::map<int, std::map<int, StepRanks>> reps;
  for (const RankTimesRecord& t : times) {
    StepRanks& s = reps[t.repetition][t.step];
    s.slowest_ns = std::max(s.slowest_ns, t.step_ns);
    s.ranks.push_back(t);
  }
  if (reps.empty()) return {};
  // Each repetition's median step, then the repetition whose median is the median.
  std::vector<std::pair<int64_t, int>> medians;  // (median step ns, repetition)
  for (const auto& [rep, steps] : reps) {
    std::vector<int64_t> ns;
    for (const auto& [step, s] : steps)
      ns.push_back(s.slowest_ns);
    std::sort(ns.begin(), ns.end());
    medians.emplace_back(ns[(ns.size() - 1) / 2], rep);
  }
  const int rep = lowerMedian(medians, std::less<>()).second;
  std::vector<std::pair<int64_t, int>> steps;  // (ns, step), in step order
  for (const auto& [step, s] : reps.at(rep))
    steps.emplace_back(s.slowest_ns, step);
  const auto by_time = [](const auto& a, const auto& b) { return a.first < b.first; };
  const auto [slowest_ns, slowest] = *std::max_element(steps.begin(), steps.end(), by_time);
  const auto [median_ns, median] = lowerMedian(steps, by_time);
  std::vector<TimelineStep> out;
  for (const auto& [which, step] :
       {std::pair{"median step", median}, std::pair{"slowest step", slowest}}) {
    // A slowest step no slower than the median one says nothing more: drawn once.
    if (!out.empty() && (out.back().step == step || slowest_ns == median_ns)) continue;
    StepRanks& s = reps.at(rep).at(step);
    std::sort(s.ranks.begin(), s.ranks.end(),
              [](const RankTimesRecord& a, const RankTimesRecord& b) { return a.rank < b.rank; });
    out.push_back({which, rep, step, nanosToSeconds(s.slowest_ns), s.ranks});
  }
  return out;
}

}  // namespace synk::harness
