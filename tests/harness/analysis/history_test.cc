// harness/history.h on synthetic stores: one value per commit in commit order, the commit where
// a step began, ordering by git's order or (without it) by time, dirty trees, point selection.
#include <catch2/catch.hpp>

#include "synk/harness/analysis/history.h"
#include "synk/harness/base/errors.h"
#include "tests/harness/noise.h"
#include "tests/harness/synthetic_store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::storeRun;
using synk::harness::test::SyntheticPoint;
using synk::harness::test::syntheticRun;
using synk::harness::test::TempDir;
using synk::testing::Noise;

namespace {

std::string commitName(int i) {
  return "commit" + std::to_string(100 + i);
}

std::string timeOf(int i) {
  return "2026-01-01T00:" + std::to_string(10 + i) + ":00Z";
}

SyntheticPoint point(const std::string& batch, std::vector<double> values) {
  return {{{"backend", "cpu"}, {"batch", batch}, {"ranks", "1"}}, std::move(values)};
}

// 12 commits, one run each, in git order; the run of commit `step` and later is 20 % slower at
// batch 32 (batch 64 stays level). Runs are stored (and timed) in the order `stored`.
std::vector<std::string> storeSteppedHistory(Store& store, int step,
                                             const std::vector<int>& stored) {
  Noise noise(21);
  std::vector<std::string> order;
  for (int i = 0; i < 12; ++i)
    order.push_back(commitName(i));
  for (size_t k = 0; k < stored.size(); ++k) {
    const int i = stored[k];
    storeRun(store, syntheticRun("toy", commitName(i), timeOf(int(k))),
             {point("32", noise.around(i >= step ? 1.2e-3 : 1e-3, 0.01, 5)),
              point("64", noise.around(2e-3, 0.01, 5))});
  }
  return order;
}

}  // namespace

TEST_CASE("history: one step is found at exactly its commit, in git's commit order", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("h.db"), Store::Mode::Write);
  // Stored out of commit order (a later commit measured first): git's order decides.
  const std::vector<int> stored = {0, 1, 2, 3, 5, 4, 6, 8, 7, 9, 11, 10};
  HistoryOptions options;
  options.commit_order = storeSteppedHistory(store, 7, stored);
  const History h = loadHistory(store, "toy", options);
  CHECK_THAT(h.order, Catch::StartsWith("commit order: git rev-list"));
  REQUIRE(h.points.size() == 2);
  const PointHistory& stepped = h.points[0];
  CHECK(stepped.label == "cpu batch=32 ranks=1");
  REQUIRE(stepped.entries.size() == 12);
  for (int i = 0; i < 12; ++i) {
    CHECK(stepped.entries[i].commit == commitName(i));
    CHECK(stepped.entries[i].values.size() == 5);
  }
  REQUIRE(stepped.changes.size() == 1);
  CHECK(stepped.entries[stepped.changes[0].index].commit == commitName(7));
  CHECK(stepped.changes[0].shift == Approx(0.2).margin(0.02));
  CHECK(h.points[1].changes.empty());  // the level point
}

TEST_CASE("history: without git history, commits are ordered by their first run's time",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("h.db"), Store::Mode::Write);
  std::vector<int> in_order;
  for (int i = 0; i < 12; ++i)
    in_order.push_back(i);
  storeSteppedHistory(store, 4, in_order);
  HistoryOptions options;
  options.commit_order = std::vector<std::string>{};
  options.point = "cpu batch=32 ranks=1";
  const History h = loadHistory(store, "toy", options);
  CHECK_THAT(h.order, Catch::Contains("by the start time of each commit's first run") &&
                          Catch::Contains("no git history"));
  REQUIRE(h.points.size() == 1);
  REQUIRE(h.points[0].changes.size() == 1);
  CHECK(h.points[0].entries[h.points[0].changes[0].index].commit == commitName(4));

  // A commit git does not know (another branch): the order falls back to time, naming it.
  options.commit_order = std::vector<std::string>{commitName(0), commitName(1)};
  CHECK_THAT(loadHistory(store, "toy", options).order,
             Catch::Contains("not ancestors of HEAD") && Catch::Contains(commitName(2)));
}

TEST_CASE("history: runs of one commit pool, a dirty tree is its own entry after its commit",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("h.db"), Store::Mode::Write);
  const std::vector<double> a = {1e-3, 1e-3, 1e-3}, b = {3e-3, 3e-3, 3e-3};
  RunRecord dirty = syntheticRun("toy", "c1", "t0");  // started first, listed after c1
  dirty.dirty = true;
  const int64_t dirty_id = storeRun(store, dirty, {point("32", b)});
  storeRun(store, syntheticRun("toy", "c2", "t3"), {point("32", a)});
  storeRun(store, syntheticRun("toy", "c1", "t1"), {point("32", a)});
  storeRun(store, syntheticRun("toy", "c1", "t2"), {point("32", b)});
  HistoryOptions options;
  options.commit_order = std::vector<std::string>{"c1", "c2"};
  const History h = loadHistory(store, "toy", options);
  const auto& e = h.points.at(0).entries;
  REQUIRE(e.size() == 3);
  CHECK(e[0].commit == "c1");
  CHECK(e[0].runs.size() == 2);
  CHECK(e[0].values.size() == 6);
  CHECK(e[0].median == Approx(2e-3));  // the median of both runs' repetition values
  CHECK(e[1].dirty);
  CHECK(e[1].label == "c1+dirty (run " + std::to_string(dirty_id) + ")");
  CHECK(e[2].commit == "c2");
  CHECK(h.points[0].changes.empty());  // 3 commits cannot hold a lasting shift
}

TEST_CASE("history: bad experiment or point names are refused naming what exists", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("h.db"), Store::Mode::Write);
  const SyntheticPoint p = point("32", {1e-3});
  storeRun(store, syntheticRun("toy", "c1", "t1"), {p});
  HistoryOptions options;
  options.commit_order = std::vector<std::string>{"c1"};
  CHECK_THROWS_WITH(loadHistory(store, "mlp", options),
                    Catch::Contains("no run of experiment 'mlp'") && Catch::Contains("toy"));
  options.point = "nope";
  CHECK_THROWS_AS(loadHistory(store, "toy", options), BadInput);
  const std::string key =
      loadHistory(store, "toy", {{}, {}, options.commit_order, {}}).points.at(0).key;
  options.point = key.substr(0, 6);  // a key prefix selects too
  CHECK(loadHistory(store, "toy", options).points.at(0).key == key);
}
