// Bad input to functions gets a clear error naming what was wrong and where, and leaves the
// session usable with every variable unchanged.
#include <catch2/catch.hpp>

#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;
using test::Kit;

namespace {

Array zeros(DType dtype, Shape shape) {
  return Array(dtype, std::move(shape));
}

}  // namespace

TEST_CASE("binding errors name the function and the offending name", "[core][errors]") {
  Kit kit(2);
  CHECK_THROWS_WITH(kit.session.function(kit.model, "nope"),
                    Contains("has no function 'nope'") && Contains("mean_dot"));
  CHECK_THROWS_WITH(kit.session.function(kit.model, "mean_dot", {.broadcast = {"q"}}),
                    Contains("'q', which is not an input") && Contains("x, y"));
  CHECK_THROWS_WITH(kit.session.function(kit.model, "mean_dot", {.outputs = {{"z", "avgx"}}}),
                    Contains("unknown reduce op 'avgx'") && Contains("output 'z'"));
  CHECK_THROWS_WITH(kit.session.function(kit.model, "mean_dot", {.outputs = {{"w", "sum"}}}),
                    Contains("'w', which is not an output"));
  // avg asked of an integer output (the default for one is sum)
  CHECK_THROWS_WITH(kit.session.function(kit.model, "int_total", {.outputs = {{"total", "avg"}}}),
                    Contains("output 'total' is int64") && Contains("'avg' needs"));
  Function total = kit.session.function(kit.model, "int_total");
  CHECK(total.outputOps() == std::vector<ReduceOp>{ReduceOp::Sum});
  CHECK(
      total({kit.session.data(Array::of<int64_t>({3, 1}, {1, 2, 3}))}).at(0).toVector<int64_t>() ==
      std::vector<int64_t>{6});
  CHECK_THROWS_WITH(
      kit.session.function(kit.model, "shared_update", {.updates = {{"s", "gather"}}}),
      Contains("'gather' is not a collective op"));
  CHECK_THROWS_WITH(kit.session.function(kit.model, "mean_dot", {.sliceable = {"s"}}),
                    Contains("sliceable names 's', which it does not read"));
  CHECK_THROWS_WITH(kit.session.function(kit.model, "fail_on_rank"),
                    Contains("input 'who' is a scalar and cannot be scattered"));
  // An integer variable's update needs an op only when a call is sliced.
  Function fail = kit.session.function(kit.model, "fail_on_rank", {.broadcast = {"who"}});
  Data x = kit.session.data(Array(DType::Float32, {2, 2}));
  Data nobody = kit.session.data(Array::scalar<int32_t>(-1));
  CHECK_NOTHROW(fail({x, nobody}));
  CHECK_THROWS_WITH(
      fail({x, nobody}, {.num_slices = 2}),
      Contains("combining the slices' updates of 'count'") && Contains("'avg' needs"));
}

TEST_CASE("inputs of the wrong dtype, ndim, count or length are refused", "[core][errors]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "mean_dot", {.broadcast = {"y"}});
  Data x = kit.session.data(zeros(DType::Float32, {6, 3}), {.name = "x_data"});
  Data y = kit.session.data(zeros(DType::Float32, {3}));
  Data x64 = kit.session.data(zeros(DType::Float64, {6, 3}), {.name = "x64"});
  Data x1 = kit.session.data(zeros(DType::Float32, {6}));
  CHECK_THROWS_WITH(f({x64, y}), Contains("input 'x' expects float32 with ndim 2") &&
                                     Contains("Data 'x64' of float64"));
  CHECK_THROWS_WITH(f({x1, y}),
                    Contains("input 'x' expects float32 with ndim 2") && Contains("with ndim 1"));
  CHECK_THROWS_WITH(f({x}), Contains("takes 2 input(s) (x, y), got 1"));
  CHECK_THROWS_WITH(f({x, y}, {.num_slices = 0}), Contains("num_slices must be >= 1"));

  Function pair = kit.session.function(kit.model, "pair_sum", {.outputs = {{"out", "gather"}}});
  Data a = kit.session.data(zeros(DType::Float32, {6, 2}));
  Data b = kit.session.data(zeros(DType::Float32, {5, 2}));
  CHECK_THROWS_WITH(pair({a, b}), Contains("scattered inputs of unequal length") &&
                                      Contains("'a' has 6 rows, 'b' has 5"));
  CHECK_NOTHROW(pair({a, b}, {.batch = Selection::count(5)}));
}

TEST_CASE("batch and batch_s out of range are refused", "[core][errors]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "noop");
  Data x = kit.session.data(zeros(DType::Float32, {10, 2}));
  CHECK_THROWS_WITH(f({x}, {.batch = Selection::count(11)}),
                    Contains("batch for function 'noop' input 'x'") && Contains("length 10"));
  CHECK_THROWS_WITH(f({x}, {.batch = Selection::range(4, 12)}), Contains("rows [4, 12)"));
  // An index equal to the length (Synkhronos let it through and crashed a worker).
  CHECK_THROWS_WITH(f({x}, {.batch = Selection::indices({0, 10})}),
                    Contains("index 10 is out of range for length 10"));
  CHECK_THROWS_AS(Selection::indices({-1}), InvalidArgument);
  CHECK_THROWS_AS(Selection::range(5, 2), InvalidArgument);

  Function sliced = kit.session.function(kit.model, "sliced_sum", {.sliceable = {"v"}});
  CHECK_THROWS_WITH(sliced({}, {.batch_s = {Selection::range(2, 9)}}),
                    Contains("batch_s for variable 'v' on rank 0") && Contains("length 8"));
  CHECK_THROWS_WITH(sliced({}, {.batch_s = {Selection::all(), Selection::indices({8})}}),
                    Contains("on rank 1") && Contains("index 8 is out of range"));
  CHECK_THROWS_WITH(sliced({}, {.batch_s = {Selection::all(), Selection::all(), Selection::all()}}),
                    Contains("batch_s has 3 selections for 2 ranks"));
  CHECK_THROWS_WITH(f({x}, {.batch_s = {Selection::all()}}), Contains("no sliceable variables"));
  Function xv = kit.session.function(kit.model, "x_plus_v",
                                     {.outputs = {{"out", "gather"}}, .sliceable = {"v"}});
  Data x6 = kit.session.data(zeros(DType::Float32, {6, 2}));
  CHECK_THROWS_WITH(
      xv({x6}, {.batch_s = {Selection::range(0, 4)}}),
      Contains("batch_s for rank 0 selects 4 rows") && Contains("share") && Contains("3 rows"));
  // Still usable after all of that.
  CHECK(f({x}).at(0).toVector<float>() == std::vector<float>{0});
}

// One session per test case: a CUDA process may fork only once (so no GENERATE around forks).
void checkRankException(int victim) {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "fail_on_rank", {.broadcast = {"who"}});
  Variable count = kit.model.variable("count");
  Data x = kit.session.data(zeros(DType::Float32, {4, 2}));
  Data who = kit.session.data(Array::scalar<int32_t>(victim));
  Data nobody = kit.session.data(Array::scalar<int32_t>(-1));
  try {
    f({x, who});
    FAIL("no exception");
  } catch (const RankError& e) {
    CHECK(e.rank() == victim);
    CHECK_THAT(std::string(e.what()), Contains(str("rank ", victim)) &&
                                          Contains(str("planned failure on rank ", victim)) &&
                                          Contains("fail_on_rank"));
  }
  // No rank applied its update, although the other rank's function succeeded.
  CHECK(kit.session.gather({count}).at(0).toVector<int64_t>() == std::vector<int64_t>{0, 0});
  CHECK(f({x, nobody}).at(0).toVector<float>() == std::vector<float>{1});
  CHECK(kit.session.gather({count}).at(0).toVector<int64_t>() == std::vector<int64_t>{1, 1});
}

TEST_CASE(
    "an exception in the master's function is raised with rank and message, nothing is "
    "updated, the session goes on",
    "[core][errors]") {
  checkRankException(0);
}

TEST_CASE(
    "an exception in a worker's function is raised with rank and message, nothing is "
    "updated, the session goes on",
    "[core][errors]") {
  checkRankException(1);
}

TEST_CASE("outputs whose shapes differ across ranks, or are never produced, are errors",
          "[core][errors]") {
  Kit kit(3);
  Function shaped = kit.session.function(kit.model, "rank_shaped", {.outputs = {{"out", "sum"}}});
  CHECK_THROWS_WITH(shaped({}),
                    Contains("output 'out' has shape (1,) on rank 0 but (2,) on rank 1"));
  Function gathered =
      kit.session.function(kit.model, "rank_shaped", {.outputs = {{"out", "gather"}}});
  CHECK(gathered({}).at(0).shape() == Shape{6});  // 1 + 2 + 3 elements: exact
  Function forgets = kit.session.function(kit.model, "forgets_output");
  Data x = kit.session.data(zeros(DType::Float32, {3, 2}));
  CHECK_THROWS_WITH(forgets({x}), Contains("forgets_output") && Contains("output 'z'"));
  CHECK_NOTHROW(gathered({}));
}
