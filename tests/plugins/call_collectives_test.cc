// A model's all_reduce during a call (the host service of ABI 1.2) on cpu ranks: sums over
// uneven shares, every op, the one-process reference, refusal outside a call, and ranks that
// make different numbers of collectives (the session aborts at once, with no wait for the
// deadline).
#include <catch2/catch.hpp>
#include <chrono>
#include <numeric>
#include <vector>

#include "synk/core/error.h"
#include "tests/plugins/plugin_test_support.h"
#include "tests/support/session_fixture.h"

namespace synk {
namespace {

const std::string kProbe = "synk_test_collective_probe";

TEST_CASE("a model all-reduces during a call over uneven shares", "[plugins]") {
  const int ranks = GENERATE(1, 2, 3);
  INFO(ranks << " ranks");
  Session session = test::forkForTest(ranks);
  Model model = session.load(testing::pluginPath(kProbe));
  std::vector<float> values(10);
  std::iota(values.begin(), values.end(), 1.0f);  // 1..10, sum 55; 3 ranks: 4, 3, 3 rows
  Data x = session.data(Array::vector<float>(values));
  Function total = session.function(model, "total");
  CHECK(total({x}).at(0).as<float>()[0] == 55);
  // Every rank holds the global sum, so the row-weighted average of the ranks' outputs is too.
  Function extremes = session.function(model, "extremes", {.outputs = {{"e", "none"}}});
  const std::vector<float> e = extremes({x}).at(0).toVector<float>();
  const float most = ranks == 1 ? 10.f : ranks == 2 ? 5.f : 4.f;
  const float least = ranks == 1 ? 10.f : ranks == 2 ? 5.f : 3.f;
  CHECK(e[0] == most);
  CHECK(e[1] == least);
  CHECK(e[2] == Approx(10.0 / ranks));
  // The one-process reference: the master holds every row; the collective is over itself.
  CHECK(total.asLocal({Array::vector<float>(values)}).at(0).as<float>()[0] == 55);
}

TEST_CASE("a model all-gathers rows padded to the largest share that rank_rows names",
          "[plugins]") {
  const int ranks = GENERATE(1, 2, 3);
  INFO(ranks << " ranks");
  Session session = test::forkForTest(ranks);
  Model model = session.load(testing::pluginPath(kProbe));
  std::vector<float> values(10);
  std::iota(values.begin(), values.end(), 1.0f);
  Function gathered = session.function(model, "gathered", {.outputs = {{"g", "none"}}});
  const std::vector<float> g = gathered({session.data(Array::vector<float>(values))})
                                   .at(0)
                                   .toVector<float>();
  const std::vector<std::vector<float>> expected = {
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
      {1, 2, 3, 4, 5, 6, 7, -1, 8, 9, 10, -1}};  // shares of 4, 3, 3 rows
  CHECK(g == expected[static_cast<size_t>(ranks - 1)]);
  // The one-process reference has no rank_rows: the gather is over the master itself.
  CHECK(gathered.asLocal({Array::vector<float>(values)}).at(0).toVector<float>() == values);
}

TEST_CASE("all_reduce outside a call is refused", "[plugins]") {
  Session session = test::forkForTest(2);
  CHECK_THROWS_WITH(session.load(testing::pluginPath(kProbe), {{"early", "true"}}),
                    Catch::Contains("all_reduce of 1 float32 elements failed"));
}

TEST_CASE("ranks that run different collectives in a call abort the session at once", "[plugins]") {
  Session session = test::forkForTest(2);
  Model model = session.load(testing::pluginPath(kProbe));
  Function diverge = session.function(model, "diverge");
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(diverge({}), Catch::Contains("diverged") || Catch::Contains("different"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK_THROWS_AS(diverge({}), UsageError);  // the session is closed
}

}  // namespace
}  // namespace synk
