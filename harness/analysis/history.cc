#include "synk/harness/analysis/history.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "synk/harness/analysis/compare.h"
#include "synk/harness/base/child.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/stats/stats.h"

namespace synk::harness {
namespace {

std::string shortCommit(const std::string& commit) {
  return commit.substr(0, 10);
}

// Runs of a clean tree share their commit's entry; each dirty run is an entry of its own.
std::string entryId(const RunRecord& run) {
  return run.dirty ? run.commit + "+dirty#" + std::to_string(run.id) : run.commit;
}

bool matches(const PointHistory& p, const std::string& wanted) {
  if (wanted.empty()) return true;
  return p.key == wanted || p.label == wanted ||
         (wanted.size() >= 4 && p.key.rfind(wanted, 0) == 0);
}

}  // namespace

std::optional<std::vector<std::string>> gitCommitOrder(const std::string& git_dir) {
  const auto listed =
      captureOutput({"git", "-C", git_dir, "rev-list", "--topo-order", "--reverse", "HEAD"},
                    std::chrono::seconds(30));
  if (!listed) return std::nullopt;
  std::vector<std::string> commits;
  std::istringstream in(*listed);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) commits.push_back(line);
  return commits;
}

History loadHistory(const Store& store, const std::string& experiment,
                    const HistoryOptions& options) {
  History history;
  history.experiment = experiment;
  std::vector<RunRecord> runs;
  std::set<std::string> experiments;
  for (RunRecord& run : store.runs()) {
    experiments.insert(run.experiment);
    if (run.experiment == experiment) runs.push_back(std::move(run));
  }
  if (runs.empty()) {
    std::string known;
    for (const std::string& name : experiments)
      known += (known.empty() ? "" : ", ") + name;
    throw BadInput("no run of experiment '" + experiment + "' in " + store.path() +
                   (known.empty() ? "" : " (it holds: " + known + ")"));
  }
  std::reverse(runs.begin(), runs.end());  // oldest first

  // Every point's entries, by key, in first-seen order.
  std::vector<PointHistory> points;
  std::map<std::string, size_t> point_at;
  std::map<std::string, std::map<std::string, HistoryEntry>> entries;  // key -> entry id -> entry
  for (const RunRecord& run : runs) {
    for (const PointRecord& p : store.points(run.id)) {
      if (p.status != PointStatus::ok) continue;
      const auto [at, added] = point_at.try_emplace(p.key, points.size());
      if (added) points.push_back({p.key, pointLabel(p.axes), {}, {}});
      if (!matches(points[at->second], options.point)) continue;
      HistoryEntry& e = entries[p.key][entryId(run)];
      if (e.runs.empty()) {
        e.commit = run.commit;
        e.dirty = run.dirty;
        e.label = shortCommit(run.commit) +
                  (run.dirty ? "+dirty (run " + std::to_string(run.id) + ")" : "");
        e.first_started = run.started_at;
      }
      e.runs.push_back(run.id);
      for (double v : repetitionValues(store, p, run.kind))
        e.values.push_back(v);
    }
  }

  // The commit order: git's, where it knows every commit; else the time of the first run.
  std::optional<std::vector<std::string>> order = options.commit_order;
  std::string dir = options.git_dir.empty() ? sourceDirectory() : options.git_dir;
  if (!order) order = gitCommitOrder(dir);
  std::map<std::string, size_t> position;
  if (order) {
    for (size_t i = 0; i < order->size(); ++i)
      position.emplace((*order)[i], i);
  }
  std::set<std::string> unknown;
  for (const RunRecord& run : runs)
    if (!position.count(run.commit)) unknown.insert(shortCommit(run.commit));
  const bool by_git = order && !order->empty() && unknown.empty();
  if (by_git) {
    history.order = "commit order: git rev-list --topo-order HEAD in " + dir;
  } else {
    std::string why;
    if (!order || order->empty()) {
      why = "no git history in " + dir;
    } else {
      for (const std::string& c : unknown)
        why += (why.empty() ? "" : ", ") + c;
      why = "not ancestors of HEAD in " + dir + ": " + why;
    }
    history.order = "commit order: by the start time of each commit's first run (" + why + ")";
  }
  auto sortKey = [&](const HistoryEntry& e) {
    const size_t at = by_git ? position.at(e.commit) : 0;
    return std::make_tuple(at, by_git && e.dirty, e.first_started, e.runs.front());
  };

  for (PointHistory& p : points) {
    if (!matches(p, options.point) || !entries.count(p.key)) continue;
    for (auto& [id, e] : entries[p.key]) {
      if (e.values.empty()) continue;
      e.median = median(e.values);
      p.entries.push_back(std::move(e));
    }
    std::sort(
        p.entries.begin(), p.entries.end(),
        [&](const HistoryEntry& a, const HistoryEntry& b) { return sortKey(a) < sortKey(b); });
    std::vector<double> series;
    for (const HistoryEntry& e : p.entries)
      series.push_back(e.median);
    if (std::all_of(series.begin(), series.end(), [](double v) { return v > 0; }))
      p.changes = findChangePoints(series, options.change_points);
    history.points.push_back(std::move(p));
  }
  if (history.points.empty()) {
    throw BadInput("no measured point of experiment '" + experiment + "' matches '" +
                   options.point + "' (a key, a key prefix of 4 or more digits, or a label)");
  }
  return history;
}

}  // namespace synk::harness
