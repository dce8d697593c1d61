// Data: shared-memory arrays with a fixed dtype and ndim.
#include <catch2/catch.hpp>

#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;

TEST_CASE("Data: create, read, write, cast rules", "[core][data]") {
  Session session = test::forkForTest(2);
  Data d = session.data(DType::Float32, 2, {.name = "d"});
  CHECK(d.shape() == Shape{0, 0});
  CHECK(d.allocSize() == 0);
  d.setValue(Array::of<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  CHECK(d.shape() == Shape{2, 3});
  CHECK(d.size() == 6);
  CHECK(d.length() == 2);
  CHECK(d.get({1, 2}) == 6);
  d.set({0, 1}, 9);
  CHECK(d.value().toVector<float>() == std::vector<float>{1, 9, 3, 4, 5, 6});
  CHECK(Array::copyOf(d.row(1)).toVector<float>() == std::vector<float>{4, 5, 6});
  // Safe up-casts only, unless forced.
  CHECK_NOTHROW(d.setValue(Array::of<uint8_t>({1, 2}, {7, 8})));
  CHECK(d.value().toVector<float>() == std::vector<float>{7, 8});
  CHECK_THROWS_WITH(d.setValue(Array::of<double>({1, 1}, {1.5})),
                    Contains("set_value of Data 'd'") && Contains("cannot safely cast float64"));
  CHECK_THROWS_WITH(d.setValue(Array::of<int32_t>({1, 1}, {3})), Contains("int32 to float32"));
  d.setValue(Array::of<double>({1, 1}, {1.5}), /*force_cast=*/true);
  CHECK(d.get({0, 0}) == 1.5);
  CHECK_THROWS_WITH(d.setValue(Array::vector<float>({1, 2})), Contains("expected ndim 2"));
  CHECK(d.conditionData(Array::of<int64_t>({1, 1}, {4}), true).dtype() == DType::Float32);
  CHECK_THROWS_WITH(d.setValue(Array::of<float>({1, 1}, {1}), false, 2.5),
                    Contains("oversize must be in [1, 2]"));
}

TEST_CASE("Data: oversize, set_shape, set_length, free_memory", "[core][data]") {
  Session session = test::forkForTest(2);
  Data d = session.data(Array::of<int64_t>({4}, {1, 2, 3, 4}), {.oversize = 1.5});
  CHECK(d.allocSize() == 6);
  d.setLength(6);  // fits in the allocation: no new segment, contents kept, new rows zero
  CHECK(d.allocSize() == 6);
  CHECK(d.value().toVector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 0, 0});
  d.setShape({10}, 2.0);  // grows: reallocates with slack, keeps contents
  CHECK(d.allocSize() == 20);
  CHECK(d.value().toVector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 0, 0, 0, 0, 0, 0});
  CHECK_THROWS_WITH(d.setShape({2, 5}), Contains("changes ndim 1 to 2"));
  d.setLength(2);
  CHECK(d.allocSize() == 20);  // shrinking keeps the allocation
  d.freeMemory();
  CHECK(d.allocSize() == 0);
  CHECK(d.shape() == Shape{0});
  d.setValue(Array::vector<int64_t>({5}));
  CHECK(d.value().toVector<int64_t>() == std::vector<int64_t>{5});
  // Sizes whose element or byte counts overflow are refused, not wrapped into a small allocation.
  CHECK_THROWS_AS(d.setShape({int64_t{1} << 62}), InvalidArgument);
  CHECK_THROWS_WITH(session.data(DType::Float64, Shape{int64_t{1} << 40, int64_t{1} << 40}),
                    Contains("too many elements"));
  CHECK(d.value().toVector<int64_t>() == std::vector<int64_t>{5});  // the refusal lost nothing
}

TEST_CASE("Data: ranks see new values and reallocations at the next call", "[core][data]") {
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "int_total", {.outputs = {{"total", "sum"}}});
  Data x = session.data(Array::of<int64_t>({2, 1}, {1, 2}));
  CHECK(f({x}).at(0).toVector<int64_t>() == std::vector<int64_t>{3});
  x.set({1, 0}, 40);
  CHECK(f({x}).at(0).toVector<int64_t>() == std::vector<int64_t>{41});
  for (int round = 0; round < 3; ++round) {  // grow: new segments every time
    const int64_t n = 100 * (round + 1);
    Array big(DType::Int64, {n, 1});
    for (int64_t i = 0; i < n; ++i)
      big.as<int64_t>()[i] = i;
    x.setValue(big);
    CHECK(f({x}).at(0).toVector<int64_t>() == std::vector<int64_t>{n * (n - 1) / 2});
  }
  // build_inputs makes one Data per input; dropping the handles frees their memory.
  Function g = session.function(model, "mean_dot", {.broadcast = {"y"}});
  {
    std::vector<Data> inputs =
        g.buildInputs({Array::of<float>({2, 2}, {1, 2, 3, 4}), Array::vector<float>({1, 1})});
    CHECK(inputs.size() == 2);
    CHECK(inputs[0].name() == "x");
    CHECK(g(inputs).at(0).toVector<float>() == std::vector<float>{5});
  }
  CHECK(f({x}).at(0).toVector<int64_t>() == std::vector<int64_t>{300 * 299 / 2});
}

TEST_CASE("Data: oversize below 1 is refused everywhere and changes nothing", "[core][data]") {
  Session session = test::forkForTest(2);
  const auto names_oversize = Contains("oversize must be in [1, 2]");
  CHECK_THROWS_AS(session.data(Array::vector<float>({1, 2}), {.oversize = 0.5}), InvalidArgument);
  CHECK_THROWS_WITH(session.data(Array::vector<float>({1, 2}), {.oversize = 0.99}),
                    names_oversize && Contains("got 0.99"));
  CHECK_THROWS_WITH(session.data(DType::Float32, Shape{4}, {.oversize = 0}), names_oversize);
  Data d = session.data(Array::vector<float>({1, 2}), {.name = "d"});
  REQUIRE(d.allocSize() == 2);
  CHECK_THROWS_WITH(d.setValue(Array::vector<float>({1, 2, 3, 4}), false, 0.5), names_oversize);
  CHECK_THROWS_WITH(d.setShape({8}, 0.999), names_oversize);
  CHECK_THROWS_WITH(d.setLength(8, -1.0), names_oversize);
  // Refused before anything moved: same contents, same allocation.
  CHECK(d.shape() == Shape{2});
  CHECK(d.allocSize() == 2);
  CHECK(d.value().toVector<float>() == std::vector<float>{1, 2});
  // The bounds themselves are accepted.
  d.setShape({4}, 1.0);
  CHECK(d.allocSize() == 4);
  d.setShape({5}, 2.0);
  CHECK(d.allocSize() == 10);
  CHECK(d.value().toVector<float>() == std::vector<float>{1, 2, 0, 0, 0});
}
