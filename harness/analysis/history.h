#pragma once
// `synk-bench history EXPERIMENT [--point KEY]`: for every comparable point of an experiment (one
// comparability key), one value per commit in commit order, and the commits where a lasting
// shift began (change_points.h: binary segmentation, p < 0.001, shift >= 5 %, 3 commits a side).
//
// A commit's value is the median of the repetition values (compare.h) of every run of the
// experiment at that commit. A run from a tree with uncommitted changes is its own entry
// ("abc1234+dirty, run 7"), right after its commit.
//
// Commit order: the order of `git rev-list --topo-order --reverse HEAD` in the given repository
// (by default the source tree this synk-bench was built from), oldest first. When git is not
// there, or a run's commit is not an ancestor of HEAD (another branch, "unknown"), every entry
// is ordered by the start time of its first run instead, and History::order says so and why.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/stats/change_points.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

struct HistoryEntry {
  std::string commit;
  bool dirty = false;
  std::string label;  // "abc1234567", "abc1234567+dirty (run 7)"
  std::string first_started;
  std::vector<int64_t> runs;
  std::vector<double> values;  // every repetition value of the runs, seconds
  double median = 0;
};

struct PointHistory {
  std::string key;
  std::string label;
  std::vector<HistoryEntry> entries;  // in commit order
  std::vector<ChangePoint> changes;   // indices into entries
};

struct History {
  std::string experiment;
  std::string order;  // how the commits were ordered, and why when not by git
  std::vector<PointHistory> points;
};

struct HistoryOptions {
  std::string point;    // a key, a key prefix, or a label; "" for every point
  std::string git_dir;  // "" for the source tree synk-bench was built from
  // nullopt: ask git; an empty list: no git history (tests), order by time.
  std::optional<std::vector<std::string>> commit_order;
  ChangePointOptions change_points;
};

// Throws BadInput when no run of the experiment is stored, or no point matches options.point.
History loadHistory(const Store& store, const std::string& experiment,
                    const HistoryOptions& options = {});

// The commits reachable from HEAD in `git_dir`, oldest first (topological order); nullopt when
// git or the repository is not available.
std::optional<std::vector<std::string>> gitCommitOrder(const std::string& git_dir);

}  // namespace synk::harness
