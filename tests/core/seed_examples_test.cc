// The seed's two examples (Synkhronos manual) reproduced on 2 ranks with the test plugin.
#include <catch2/catch.hpp>
#include <random>

#include "tests/support/session_fixture.h"

using namespace synk;

TEST_CASE("introductory example: mean(x . y) over scattered x equals the one-process result",
          "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "mean_dot", {.broadcast = {"y"}});
  session.distribute();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  Array x(DType::Float32, {100, 10}), y(DType::Float32, {10});
  for (int64_t i = 0; i < x.size(); ++i)
    x.as<float>()[i] = normal(rng);
  for (int64_t i = 0; i < y.size(); ++i)
    y.as<float>()[i] = normal(rng);
  const float expected = f.asLocal({x, y}).at(0).as<float>()[0];
  const float r = f({session.data(x), session.data(y)}).at(0).as<float>()[0];
  CHECK(r == Approx(expected).epsilon(1e-5));
  CHECK(expected != 0.0f);
}

TEST_CASE("shared-variable example gives the seed's printed values", "[core][seed]") {
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "shared_update");
  Variable s = model.variable("s");
  session.distribute();
  const Array x_dat = Array::of<float>({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
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
