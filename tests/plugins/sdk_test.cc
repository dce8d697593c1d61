// The C++ SDK: its value types against core's, its spec builder, and (through the host loader
// and the "sdk_probe" plugin) declarations, typed accessors and exception mapping at the seam.
#include "synk/plugins/sdk/synk_sdk.h"

#include <dlfcn.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "synk/core/dtype.h"
#include "synk/plugins/host/dll_model_loader.h"
#include "tests/plugins/plugin_test_support.h"

namespace synk {
namespace {

namespace sdk = synk::sdk;
using testing::pluginPath;
using testing::TestCallFrame;
using testing::TestDevice;

static_assert(static_cast<int>(sdk::DType::Float32) == static_cast<int>(DType::Float32));
static_assert(static_cast<int>(sdk::DType::Float16) == static_cast<int>(DType::Float16));
static_assert(static_cast<int>(sdk::DType::BFloat16) == static_cast<int>(DType::BFloat16));
static_assert(sizeof(sdk::Half) == 2 && sizeof(sdk::BFloat16) == 2);
static_assert(sdk::dtypeOf<sdk::Half>() == sdk::DType::Float16);

TEST_CASE("SDK dtype sizes and names match core's", "[plugins]") {
  for (int code = 0; code < kNumDTypes; ++code) {
    INFO("dtype code " << code);
    CHECK(sdk::dtypeSize(static_cast<sdk::DType>(code)) == dtypeSize(static_cast<DType>(code)));
    CHECK(std::string(sdk::dtypeName(static_cast<sdk::DType>(code))) ==
          dtypeName(static_cast<DType>(code)));
  }
}

TEST_CASE("SDK float16 and bfloat16 conversions agree with core's bit for bit", "[plugins]") {
  // Every half value converts to the same float; a sweep of floats (normal, subnormal, overflow,
  // ties) rounds to the same bits.
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float sdk_value = sdk::toFloat(sdk::Half{static_cast<uint16_t>(bits)});
    const float core_value = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(core_value)) {
      CHECK(std::isnan(sdk_value));
    } else if (std::memcmp(&sdk_value, &core_value, sizeof(float)) != 0) {
      FAIL("half bits " << bits << ": sdk " << sdk_value << ", core " << core_value);
    }
  }
  // 65,536 floats spread over every exponent and both signs.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65537) {
    const auto raw = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &raw, sizeof value);
    if (std::isnan(value)) continue;
    if (sdk::toHalf(value).bits != floatToHalf(value)) FAIL("toHalf(" << value << ")");
    if (sdk::toBFloat16(value).bits != floatToBFloat16(value)) FAIL("toBFloat16(" << value << ")");
  }
  // Ties and edges: half-way subnormals, the largest half, the first value rounding to inf.
  for (float edge : {1e-8f, 2.98023224e-8f, 8.94069672e-8f, 6.1e-5f, -3e-6f, 65504.0f, 65519.0f,
                     65520.0f, 1.00048828125f, 1.00146484375f}) {
    CHECK(sdk::toHalf(edge).bits == floatToHalf(edge));
  }
  CHECK(sdk::toFloat(sdk::toBFloat16(1.5f)) == 1.5f);
}

TEST_CASE("SDK spec builder keeps references stable and checks initial values", "[plugins]") {
  sdk::Spec spec("m");
  sdk::Variable& first = spec.variable("a", sdk::DType::Float32, {2});
  // (number + "v": GCC 12 warns falsely, -Wrestrict, on "v" + std::to_string(i))
  for (int i = 0; i < 100; ++i)
    spec.variable(std::to_string(i) + "v", sdk::DType::Int32, {});
  first.initialValues<float>({1, 2}).rankLocal(sdk::Reduction::Mean);
  CHECK(spec.variables().front().kind == sdk::VariableKind::RankLocal);
  CHECK(spec.variables().front().initial.size() == 8);
  CHECK_THROWS_WITH(first.initialValues<double>({1, 2}),
                    "variable 'a' is float32, its initial values are float64");
  // Any contiguous range of the element type: vector, array, C array.
  const std::vector<float> from_vector = {3, 4};
  first.initialValues(from_vector);
  CHECK(spec.variables().front().initial == sdk::bytesOf<float>({3, 4}));
  first.initialValues(std::array<float, 2>{5, 6});
  CHECK(spec.variables().front().initial == sdk::bytesOf<float>({5, 6}));
  const float from_c_array[2] = {7, 8};
  first.initialValues(from_c_array);
  CHECK(spec.variables().front().initial == sdk::bytesOf<float>({7, 8}));
  CHECK_THROWS_WITH(first.initialValues(std::vector<int32_t>{1, 2}),
                    "variable 'a' is float32, its initial values are int32");
  spec.function("f");
  spec.add(sdk::Function{"g"});
  CHECK(spec.functionIndex("g") == 1);
  CHECK(spec.functionIndex("h") == -1);
}

struct Probe {
  testing::LogRecorder log;
  DllModelLoader loader{log.sink()};
  std::shared_ptr<LoadedModel> model = loader.load(pluginPath("synk_test_sdk_probe"));
  TestDevice device;
  std::unique_ptr<ModelInstance> instance = model->instantiate(RankInfo{1, 3, &device});
  std::string file = model->source();

  // The PluginError message of calling `function` with no tensors.
  std::string failure(const std::string& function, Array* input = nullptr) {
    TestCallFrame frame(device, model->spec(), function);
    if (input) frame.inputs = {TestCallFrame::ref(*input)};
    try {
      instance->call(frame);
    } catch (const PluginError& e) {
      return e.what();
    }
    FAIL(function << " succeeded");
    return {};
  }
  std::string failed(const std::string& function) {
    return "model 'sdk_probe' (" + file + "): function '" + function + "' failed: ";
  }
};

TEST_CASE("SDK declarations reach the host intact", "[plugins]") {
  Probe probe;
  const ModelSpec& spec = probe.model->spec();
  CHECK(spec.name == "sdk_probe");
  REQUIRE(spec.variables.size() == 3);
  CHECK(spec.variables[0].name == "scale");
  CHECK(spec.variables[0].kind == VariableKind::Mirrored);
  CHECK(spec.variables[0].initial.toVector<double>() == std::vector<double>{2.0});
  CHECK(spec.variables[1].kind == VariableKind::RankLocal);
  CHECK(spec.variables[1].local_reduction == LocalReduction::Sum);
  const VariableSpec& halves = spec.variables[2];
  CHECK((halves.name == "halves" && halves.dtype == DType::Float16 && halves.shape == Shape{2}));
  CHECK(halves.local_reduction == LocalReduction::Mean);
  CHECK(halves.initial.flat(0) == 0.5);
  CHECK(halves.initial.flat(1) == -2.0);
  REQUIRE(spec.functions.size() == 11);
  const FunctionSpec& scale_rows = spec.functions[0];
  CHECK(scale_rows.inputs.size() == 2);
  CHECK((scale_rows.outputs[1].name == "rows" && scale_rows.outputs[1].dtype == DType::Int64 &&
         scale_rows.outputs[1].ndim == 0));
  CHECK(scale_rows.reads == std::vector<std::string>{"scale", "steps"});
  CHECK(scale_rows.updates == std::vector<std::string>{"steps"});
  CHECK(spec.functions[1].reads == std::vector<std::string>{"halves"});
}

TEST_CASE("SDK typed accessors read inputs and variables and write outputs and updates",
          "[plugins]") {
  Probe probe;
  TestCallFrame frame(probe.device, probe.model->spec(), "scale_rows");
  Array x = Array::of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Array bias = Array::vector<float>({0.5f, 0, -1});
  Array scale = Array::scalar<double>(2.0);
  Array steps = Array::scalar<int64_t>(10);
  Array steps_new = Array::scalar<int64_t>(0);
  frame.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(bias)};
  frame.reads = {TestCallFrame::ref(scale), TestCallFrame::ref(steps)};
  frame.updates = {TestCallFrame::ref(steps_new)};
  probe.instance->call(frame);
  CHECK(frame.result(0).shape() == Shape{2, 3});
  CHECK(Array::copyOf(frame.result(0)).toVector<float>() ==
        std::vector<float>{2.5f, 4, 5, 8.5f, 10, 11});
  CHECK(frame.result(1).flat(0) == 2);
  CHECK(steps_new.flat(0) == 12);
  CHECK(steps.flat(0) == 10);

  TestCallFrame halves_frame(probe.device, probe.model->spec(), "half_sum");
  Array halves = Array::copyOf(probe.model->spec().variables[2].initial);
  halves_frame.reads = {TestCallFrame::ref(halves)};
  probe.instance->call(halves_frame);
  CHECK(halves_frame.result(0).flat(0) == -1.5);
}

TEST_CASE("SDK turns every exception into a code and the host into a PluginError", "[plugins]") {
  Probe probe;
  CHECK(probe.failure("boom") == probe.failed("boom") + "kaboom");
  CHECK(probe.failure("boom_unknown") ==
        probe.failed("boom_unknown") + "unknown exception (not derived from std::exception)");
  CHECK(probe.failure("unsupported") ==
        probe.failed("unsupported") + "probe cannot do that on host");
  CHECK(probe.failure("skip_output") ==
        probe.failed("skip_output") + "it returned without allocating output 'y'");
  Array x = Array::vector<float>({1});
  CHECK(probe.failure("wrong_type", &x) ==
        probe.failed("wrong_type") + "tensor 'x' is float32, not float64");
  CHECK(probe.failure("bad_shape") ==
        probe.failed("bad_shape") +
            "output 'y' is declared with 1 dimensions; allocated with shape (2, 2)");
  CHECK(probe.failure("twice") == probe.failed("twice") + "output 'y' allocated twice");
  // The instance stays usable after a failure.
  CHECK_NOTHROW([&] {
    TestCallFrame frame(probe.device, probe.model->spec(), "log_and_alloc");
    probe.instance->call(frame);
  }());
}

TEST_CASE("an output the host refuses fails the call with both sides' reasons", "[plugins]") {
  Probe probe;
  TestCallFrame frame(probe.device, probe.model->spec(), "scale_rows");
  Array x = Array::of<float>({1, 1}, {1});
  Array bias = Array::vector<float>({0});
  Array scale = Array::scalar<double>(1);
  Array steps = Array::scalar<int64_t>(0);
  Array steps_new = Array::scalar<int64_t>(0);
  frame.inputs = {TestCallFrame::ref(x), TestCallFrame::ref(bias)};
  frame.reads = {TestCallFrame::ref(scale), TestCallFrame::ref(steps)};
  frame.updates = {TestCallFrame::ref(steps_new)};
  frame.refuse_output = 0;
  CHECK_THROWS_WITH(probe.instance->call(frame),
                    probe.failed("scale_rows") +
                        "the host could not allocate output 'y' with shape (1, 1) (host: test "
                        "frame refuses this output)");
}

TEST_CASE("a throwing constructor becomes a create failure with its message", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_sdk_probe"));
  TestDevice device;
  CHECK_THROWS_WITH(model->instantiate(RankInfo{13, 16, &device}),
                    Catch::EndsWith("create failed on rank 13 of 16 (cpu) with "
                                    "SYNK_ERROR_INTERNAL: probe refuses rank 13"));
}

TEST_CASE("SDK context exposes rank and services and logging", "[plugins]") {
  Probe probe;
  {
    TestCallFrame frame(probe.device, probe.model->spec(), "log_and_alloc");
    probe.instance->call(frame);
  }
  CHECK(probe.log.contains(
      "[synk rank 1 warning] model 'sdk_probe': probe allocated 1024 bytes on rank 1 of 3"));
  CHECK(probe.device.live() == 0);
  {
    TestCallFrame frame(probe.device, probe.model->spec(), "leak");
    probe.instance->call(frame);
  }
  CHECK(probe.device.live() == 1);
  probe.instance.reset();  // the host releases what the plugin forgot, and says so
  CHECK(probe.device.live() == 0);
  CHECK(probe.log.contains("1 device allocation(s) not released by the plugin"));
}

// The export map keeps GNU unique symbols of C++ templates local: otherwise glibc would pin the
// library (NODELETE) and a rebuilt plugin could never be reloaded in the same process.
TEST_CASE("an SDK plugin is unloaded when its last object dies", "[plugins]") {
  const std::string file = std::filesystem::canonical(pluginPath("synk_test_sdk_probe")).string();
  auto mapped = [&] {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle) dlclose(handle);
    return handle != nullptr;
  };
  {
    Probe probe;
    CHECK(mapped());
  }
  CHECK_FALSE(mapped());
}

}  // namespace
}  // namespace synk

namespace synk {
namespace {

std::string handledFile(const std::string& variant) {
  return std::filesystem::canonical(pluginPath("synk_test_sdk_handlers" + variant)).string();
}

std::string handledLoadError(const std::string& variant) {
  DllModelLoader loader;
  try {
    loader.load(pluginPath("synk_test_sdk_handlers" + variant));
  } catch (const PluginError& e) {
    return e.what();
  }
  FAIL("loading the " << variant << " variant succeeded");
  return {};
}

TEST_CASE("SDK handlers dispatch calls and declared output shapes are enforced", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_sdk_handlers"));
  TestDevice device;
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  Array x = Array::of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  {
    TestCallFrame frame(device, model->spec(), "double");
    frame.inputs = {TestCallFrame::ref(x)};
    instance->call(frame);
    CHECK(Array::copyOf(frame.result(0)).toVector<float>() ==
          std::vector<float>{2, 4, 6, 8, 10, 12});
  }
  {
    TestCallFrame frame(device, model->spec(), "total");
    frame.inputs = {TestCallFrame::ref(x)};
    instance->call(frame);
    CHECK(frame.result(0).as<float>()[0] == 21);
  }
  TestCallFrame frame(device, model->spec(), "wrong");
  frame.inputs = {TestCallFrame::ref(x)};
  CHECK_THROWS_WITH(instance->call(frame),
                    Catch::EndsWith("function 'wrong' failed: output 'y' is declared with shape "
                                    "(-1, 3); allocated with shape (2, 4)"));
}

TEST_CASE("an author's mistakes in handlers and output shapes fail the load", "[plugins]") {
  const std::string prefix = ": synk_plugin_v1.describe failed with SYNK_ERROR_INVALID_ARGUMENT: ";
  CHECK(handledLoadError("_missing") ==
        handledFile("_missing") + prefix +
            "model 'handled': function(s) 'total' declared but not implemented (no handler)");
  CHECK(handledLoadError("_extra") ==
        handledFile("_extra") + prefix +
            "model 'handled': handler(s) for 'ghost', which the spec does not declare");
  CHECK(handledLoadError("_bad_dim") ==
        handledFile("_bad_dim") + prefix +
            "function 'bad' declares output 'y' with shape (-2, 3) (dimensions are >= 0, or "
            "kAnySize)");
}

}  // namespace
}  // namespace synk
