// The seed's two examples (Synkhronos manual) on 2 ranks: once with the test plugin, once with
// the real example plugins (plugins/examples). Expected values come from plain loops here and
// from the numbers printed in the manual, never from synk itself.
#include <catch2/catch.hpp>
#include <random>

#include "synk/synk.h"
#include "tests/support/session_fixture.h"

using namespace synk;

namespace {

// The manual's x_dat = randn(100, 10), y_dat = randn(10), float32.
struct IntroData {
  Array x{DType::Float32, {100, 10}};
  Array y{DType::Float32, {10}};
  IntroData() {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (int64_t i = 0; i < x.size(); ++i)
      x.as<float>()[i] = normal(rng);
    for (int64_t i = 0; i < y.size(); ++i)
      y.as<float>()[i] = normal(rng);
  }
  // z = mean over the rows of x . y, in double.
  double z() const {
    const int64_t rows = x.shape()[0], cols = x.shape()[1];
    double total = 0;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        total += double(x.as<float>()[i * cols + j]) * double(y.as<float>()[j]);
    }
    return total / double(rows);
  }
};

// The shared-variable example's f: s_new[j] = sum over rows [begin, end) of x[i][j] * s[j].
std::vector<float> manualUpdate(const std::vector<float>& x, const std::vector<float>& s, int begin,
                                int end) {
  std::vector<float> next(s.size(), 0.0f);
  for (int i = begin; i < end; ++i) {
    for (size_t j = 0; j < s.size(); ++j)
      next[j] += x[i * s.size() + j] * s[j];
  }
  return next;
}

const std::vector<float> kX = {1, 1, 2, 2, 3, 3, 4, 4};  // the manual's x_dat, 4 x 2

}  // namespace

TEST_CASE("introductory example: mean(x . y) over scattered x equals the one-process result",
          "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "mean_dot", {.broadcast = {"y"}});
  session.distribute();
  const IntroData in;
  const double expected = in.z();
  REQUIRE(expected != 0.0);
  const float r = f({session.data(in.x), session.data(in.y)}).at(0).as<float>()[0];
  CHECK(r == Approx(expected).epsilon(1e-5).margin(1e-6));
  CHECK(f.asLocal({in.x, in.y}).at(0).as<float>()[0] ==
        Approx(expected).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("introductory example with the real intro plugin: z = mean over rows of x . y",
          "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(synk::pluginPath("synk_example_intro"));
  Function f = session.function(model, "z", {.broadcast = {"y"}});
  session.distribute();
  const IntroData in;
  const double expected = in.z();
  REQUIRE(expected != 0.0);
  const Array r = f({session.data(in.x), session.data(in.y)}).at(0);
  CHECK(r.shape() == Shape{});
  CHECK(r.as<float>()[0] == Approx(expected).epsilon(1e-5).margin(1e-6));
  CHECK(f.asLocal({in.x, in.y}).at(0).as<float>()[0] ==
        Approx(expected).epsilon(1e-5).margin(1e-6));
  // An uneven split (7 rows on 2 ranks: 4 and 3) still gives the mean over every row.
  const double first7 = [&] {
    double total = 0;
    for (int64_t i = 0; i < 7; ++i) {
      for (int64_t j = 0; j < 10; ++j)
        total += double(in.x.as<float>()[i * 10 + j]) * double(in.y.as<float>()[j]);
    }
    return total / 7.0;
  }();
  const float r7 = f({session.data(in.x), session.data(in.y)}, {.batch = Selection::count(7)})
                       .at(0)
                       .as<float>()[0];
  CHECK(r7 == Approx(first7).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("shared-variable example gives the seed's printed values", "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "shared_update");
  Variable s = model.variable("s");
  session.distribute();
  const Array x_dat = Array::of<float>({4, 2}, kX);
  const Array s_init = Array::vector<float>({1, 1});
  Data x = session.data(x_dat);

  CHECK(s.getValue().toVector<float>() == std::vector<float>{1, 1});
  f.asLocal({x_dat});
  CHECK(s.getValue().toVector<float>() == std::vector<float>{10, 10});

  s.setValue(s_init);
  f({x});
  CHECK(s.getValue().toVector<float>() == std::vector<float>{3, 3});
  Array gathered = session.gather({s}, 1).at(0);
  CHECK(gathered.shape() == Shape{2, 2});
  CHECK(gathered.toVector<float>() == std::vector<float>{3, 3, 7, 7});

  session.reduce({s}, ReduceOp::Sum);
  CHECK(s.getValue().toVector<float>() == std::vector<float>{10, 10});
  CHECK(session.gather({s}, 1).at(0).toVector<float>() == std::vector<float>{10, 10, 7, 7});

  session.broadcast({s}, {s_init});
  f({x});
  session.allReduce({s}, ReduceOp::Sum);
  CHECK(session.gather({s}, 1).at(0).toVector<float>() == std::vector<float>{10, 10, 10, 10});
}

TEST_CASE("shared-variable example with the real plugin prints the manual's values",
          "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(synk::pluginPath("synk_example_shared_variable"));
  Function f = session.function(model, "f");
  Variable s = model.variable("s");
  session.distribute();
  const Array x_dat = Array::of<float>({4, 2}, kX);
  const std::vector<float> ones = {1, 1};
  const Array s_init = Array::vector<float>(ones);
  Data x = session.data(x_dat, {.name = "x"});
  // Plain loops over the manual's data: one process uses every row, rank r of 2 its 2 rows.
  const std::vector<float> serial = manualUpdate(kX, ones, 0, 4);
  const std::vector<float> rank0 = manualUpdate(kX, ones, 0, 2);
  const std::vector<float> rank1 = manualUpdate(kX, ones, 2, 4);
  REQUIRE(serial == std::vector<float>{10, 10});  // the manual's printed values
  REQUIRE(rank0 == std::vector<float>{3, 3});
  REQUIRE(rank1 == std::vector<float>{7, 7});
  auto cat = [](std::vector<float> a, const std::vector<float>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };

  CHECK(s.getValue().toVector<float>() == ones);  // s initial: [1, 1]
  f.asLocal({x_dat});
  CHECK(s.getValue().toVector<float>() == serial);  // after the one-process call: [10, 10]

  s.setValue(s_init);
  f({x});
  CHECK(s.getValue().toVector<float>() == rank0);  // local s after reset and synk call: [3, 3]
  const Array gathered = session.gather({s}, 1).at(0);
  CHECK(gathered.shape() == Shape{2, 2});
  CHECK(gathered.toVector<float>() == cat(rank0, rank1));  // [[3, 3], [7, 7]]

  session.reduce({s}, ReduceOp::Sum);
  const std::vector<float> summed = {rank0[0] + rank1[0], rank0[1] + rank1[1]};
  CHECK(s.getValue().toVector<float>() == summed);  // [10, 10]
  CHECK(session.gather({s}, 1).at(0).toVector<float>() ==
        cat(summed, rank1));  // [[10, 10], [7, 7]]

  session.broadcast({s}, {s_init});
  CHECK(session.gather({s}, 1).at(0).toVector<float>() == cat(ones, ones));
  f({x});
  session.allReduce({s}, ReduceOp::Sum);
  CHECK(session.gather({s}, 1).at(0).toVector<float>() == cat(summed, summed));  // [[10, 10] x 2]
}
