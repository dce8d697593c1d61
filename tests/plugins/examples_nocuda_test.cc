// Built only when synk was configured without CUDA: an example called on a cuda device must fail
// with a clear reason (examples_gpu_test covers CUDA builds).
#include <catch2/catch.hpp>

#include "synk/plugins/host/dll_model_loader.h"
#include "tests/plugins/plugin_test_support.h"

namespace synk {
namespace {

using testing::pluginPath;
using testing::TestCallFrame;
using testing::TestDevice;

TEST_CASE("without CUDA an example called on a cuda device says why", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_example_intro"));
  TestDevice device(DeviceKind::Cuda);
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  Array x = Array::of<float>({1, 1}, {1});
  Array y = Array::vector<float>({1});
  TestCallFrame frame(device, model->spec(), "z");
  frame.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(y)};
  CHECK_THROWS_WITH(instance->call(frame),
                    Catch::EndsWith("function 'z' failed: cannot run on cuda:0: this build has "
                                    "no CUDA kernels (synk was configured without CUDA)"));
}

}  // namespace
}  // namespace synk
