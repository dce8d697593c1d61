// Batches with fewer rows than ranks. The manual's training pattern (each rank computes a
// gradient on its rows, all_reduce(sum), apply) must give the parameters one process gives,
// however the rows fall on ranks: a rank whose share is empty runs the function on zero rows, so
// its gradient is zero rather than the previous step's reduced one (issue 7: 4 ranks, batch 3,
// 15 steps read 2.93 where one process reads 0.52).
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/support/session_fixture.h"

using namespace synk;
using test::Kit;

namespace {

constexpr int64_t kRows = 20;
constexpr int kSteps = 15;
constexpr double kLearningRate = 0.05;
const std::vector<double> kStart = {0.5, -0.25};  // lin_w's initial value (testkit)

// x[i] = (cos(i), sin(i)), y[i] = 2 x0 - x1 + 0.3: bounded, distinct, not exactly representable.
Array features() {
  Array x(DType::Float64, {kRows, 2});
  for (int64_t i = 0; i < kRows; ++i) {
    x.as<double>()[2 * i] = std::cos(double(i));
    x.as<double>()[2 * i + 1] = std::sin(double(i));
  }
  return x;
}

Array targets(const Array& x) {
  Array y(DType::Float64, {kRows});
  for (int64_t i = 0; i < kRows; ++i)
    y.as<double>()[i] = 2 * x.get({i, 0}) - x.get({i, 1}) + 0.3;
  return y;
}

// Step k uses rows [start, start + batch) with start = k * batch mod (kRows - batch + 1).
int64_t batchStart(int step, int64_t batch) {
  return (step * batch) % (kRows - batch + 1);
}

// The same steps in plain loops: the one-process parameters.
std::vector<double> reference(const Array& x, const Array& y, int64_t batch) {
  std::vector<double> w = kStart;
  for (int k = 0; k < kSteps; ++k) {
    double g0 = 0, g1 = 0;
    for (int64_t i = batchStart(k, batch); i < batchStart(k, batch) + batch; ++i) {
      const double err = x.get({i, 0}) * w[0] + x.get({i, 1}) * w[1] - y.get({i});
      g0 += err * x.get({i, 0});
      g1 += err * x.get({i, 1});
    }
    w[0] -= kLearningRate * g0;
    w[1] -= kLearningRate * g1;
  }
  return w;
}

// One session per test case: on cuda the test process is rank 0 and initialises CUDA, after
// which it may not fork another session (CTest runs each case in a process of its own).
void checkTrainingPattern(int ranks) {
  Kit kit(ranks);
  Function grad = kit.session.function(kit.model, "lin_grad");
  Function apply = kit.session.function(kit.model, "lin_apply", {.broadcast = {"lr"}});
  Variable w = kit.model.variable("lin_w"), g = kit.model.variable("lin_g");
  const Array x = features(), y = targets(x);
  Data xs = kit.session.data(x), ys = kit.session.data(y);
  Data lr = kit.session.data(Array::scalar<double>(kLearningRate));
  for (int64_t batch : {1, 2, 3, 5}) {
    INFO(ranks << " ranks, batch of " << batch << " rows");
    kit.session.broadcast({w}, {Array::vector<double>(kStart)});
    for (int k = 0; k < kSteps; ++k) {
      const int64_t start = batchStart(k, batch);
      grad({xs, ys}, {.batch = Selection::range(start, start + batch)});
      kit.session.allReduce({g}, ReduceOp::Sum);
      apply({lr});
    }
    const std::vector<double> expected = reference(x, y, batch);
    // Every rank holds the same parameters, and they are one process's.
    const std::vector<double> all = kit.session.gather({w}).at(0).toVector<double>();
    REQUIRE(all.size() == size_t(2 * ranks));
    for (int r = 0; r < ranks; ++r) {
      CHECK(all[2 * r] == Approx(expected[0]).epsilon(1e-12));
      CHECK(all[2 * r + 1] == Approx(expected[1]).epsilon(1e-12));
    }
  }
}

}  // namespace

TEST_CASE("the manual's training pattern gives one process's parameters on 1 rank", "[core]") {
  checkTrainingPattern(1);
}
TEST_CASE("the manual's training pattern gives one process's parameters on 2 ranks", "[core]") {
  checkTrainingPattern(2);
}
TEST_CASE("the manual's training pattern gives one process's parameters on 3 ranks", "[core]") {
  checkTrainingPattern(3);
}
TEST_CASE("the manual's training pattern gives one process's parameters on 4 ranks", "[core]") {
  checkTrainingPattern(4);
}

TEST_CASE("a rank with an empty share runs the function on zero rows", "[core]") {
  // 2 rows on 4 ranks: ranks 2 and 3 run lin_grad on zero rows and store a zero gradient.
  Kit kit(4);
  Function grad = kit.session.function(kit.model, "lin_grad");
  Variable g = kit.model.variable("lin_g");
  const Array x = features(), y = targets(x);
  kit.session.broadcast({g}, {Array::vector<double>({7, 7})});
  grad({kit.session.data(x), kit.session.data(y)}, {.batch = Selection::range(0, 2)});
  const std::vector<double> all = kit.session.gather({g}).at(0).toVector<double>();
  REQUIRE(all.size() == 8);
  CHECK(all[0] != 7.0);
  CHECK(all[2] != 7.0);
  CHECK(all[4] == 0.0);
  CHECK(all[5] == 0.0);
  CHECK(all[6] == 0.0);
  CHECK(all[7] == 0.0);
}

TEST_CASE("a zero-row call returns what asLocal returns on zero rows", "[core]") {
  Kit kit(2);
  Function dot = kit.session.function(kit.model, "mean_dot", {.broadcast = {"y"}});
  Function total = kit.session.function(kit.model, "int_total", {.outputs = {{"total", "sum"}}});
  const Array none(DType::Float32, {0, 3});
  const Array y = Array::vector<float>({1, 2, 3});
  Data none_data = kit.session.data(none), y_data = kit.session.data(y);
  // mean over no rows: NaN, distributed (no batch given, and an empty batch) and local alike.
  CHECK(std::isnan(dot.asLocal({none, y}).at(0).toVector<float>()[0]));
  CHECK(std::isnan(dot({none_data, y_data}).at(0).toVector<float>()[0]));
  Data rows = kit.session.data(Array(DType::Float32, {4, 3}));
  CHECK(std::isnan(dot({rows, y_data}, {.batch = Selection::count(0)}).at(0).toVector<float>()[0]));
  // a sum over no rows: 0 both ways.
  const Array no_ints(DType::Int64, {0, 2});
  CHECK(total.asLocal({no_ints}).at(0).toVector<int64_t>() == std::vector<int64_t>{0});
  CHECK(total({kit.session.data(no_ints)}).at(0).toVector<int64_t>() == std::vector<int64_t>{0});
}
