// The example models on the host device: the numbers of Synkhronos' introductory and
// shared-variable examples.
#include <catch2/catch.hpp>
#include <random>

#include "synk/plugins/host/dll_model_loader.h"
#include "tests/plugins/plugin_test_support.h"

namespace synk {
namespace {

using testing::pluginPath;
using testing::TestCallFrame;
using testing::TestDevice;

TEST_CASE("intro declares z of x and y and computes the mean of x.dot(y) over rows", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_example_intro"));
  const ModelSpec& spec = model->spec();
  REQUIRE(spec.name == "intro");
  REQUIRE(spec.functions.size() == 1);
  const FunctionSpec& z = spec.functions[0];
  CHECK(z.name == "z");
  REQUIRE(z.inputs.size() == 2);
  CHECK((z.inputs[0].name == "x" && z.inputs[0].ndim == 2 && z.inputs[1].name == "y" &&
         z.inputs[1].ndim == 1));
  REQUIRE(z.outputs.size() == 1);
  CHECK(
      (z.outputs[0].name == "z" && z.outputs[0].dtype == DType::Float32 && z.outputs[0].ndim == 0));

  std::mt19937 random(7);
  std::normal_distribution<float> normal;
  std::vector<float> xs(100 * 10), ys(10);
  for (float& v : xs)
    v = normal(random);
  for (float& v : ys)
    v = normal(random);
  double expected = 0;
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 10; ++j)
      expected += double{xs[i * 10 + j]} * ys[j];
  }
  expected /= 100;

  TestDevice device;
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  Array x = Array::of<float>({100, 10}, xs);
  Array y = Array::vector<float>(ys);
  TestCallFrame frame(device, spec, "z");
  frame.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(y)};
  instance->call(frame);
  CHECK(frame.result(0).shape().empty());
  CHECK(frame.result(0).flat(0) == Approx(expected).epsilon(1e-5));

  SECTION("mismatched columns are the plugin's InvalidArgument") {
    Array short_y = Array::vector<float>({1, 2});
    TestCallFrame bad(device, spec, "z");
    bad.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(short_y)};
    CHECK_THROWS_WITH(instance->call(bad),
                      Catch::EndsWith("function 'z' failed: x has 10 columns but y has 2 "
                                      "elements"));
  }
}

TEST_CASE("shared_variable updates s from each rank's slice without writing it in place",
          "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_example_shared_variable"));
  const ModelSpec& spec = model->spec();
  REQUIRE(spec.variables.size() == 1);
  const VariableSpec& s_spec = spec.variables[0];
  CHECK((s_spec.name == "s" && s_spec.dtype == DType::Float32 && s_spec.shape == Shape{2}));
  CHECK(s_spec.initial.toVector<float>() == std::vector<float>{1, 1});
  REQUIRE(spec.functions.size() == 1);
  CHECK(spec.functions[0].reads == std::vector<std::string>{"s"});
  CHECK(spec.functions[0].updates == std::vector<std::string>{"s"});

  // The seed's data split over two ranks: rank 0 gets [3, 3], rank 1 [7, 7], serial [10, 10].
  const auto [rank, rows, expected] = GENERATE(table<int, std::vector<float>, std::vector<float>>(
      {{0, {1, 1, 2, 2}, {3, 3}},
       {1, {3, 3, 4, 4}, {7, 7}},
       {0, {1, 1, 2, 2, 3, 3, 4, 4}, {10, 10}}}));
  TestDevice device;
  auto instance = model->instantiate(RankInfo{rank, 2, &device});
  Array x = Array::of<float>({static_cast<int64_t>(rows.size() / 2), 2}, rows);
  Array s = Array::copyOf(s_spec.initial);
  Array s_new(DType::Float32, {2});
  TestCallFrame frame(device, spec, "f");
  frame.inputs = {TestCallFrame::ref(x)};
  frame.reads = {TestCallFrame::ref(s)};
  frame.updates = {TestCallFrame::ref(s_new)};
  instance->call(frame);
  CHECK(s_new.toVector<float>() == expected);
  CHECK(s.toVector<float>() == std::vector<float>{1, 1});
}

}  // namespace
}  // namespace synk
