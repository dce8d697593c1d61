// Load-time model options through the SDK (sdk::Options, spec(const Options&)): typed getters
// with defaults shape the declarations, the constructor sees the same values, bad values and
// unknown keys are refused with the reason, a 1.0 host's sink gives the defaults, and a session
// loads the model with the same options on every rank.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/host/dll_model_loader.h"
#include "tests/plugins/plugin_test_support.h"
#include "tests/support/session_fixture.h"

namespace synk {
namespace {

using testing::pluginPath;
using testing::TestCallFrame;
using testing::TestDevice;

const std::string kSized = "synk_test_sdk_options";

std::string loadError(const std::string& target, const ModelOptions& options) {
  DllModelLoader loader;
  try {
    loader.load(pluginPath(target), options);
  } catch (const PluginError& e) {
    return e.what();
  }
  FAIL("loading " << target << " succeeded");
  return {};
}

std::vector<int64_t> echo(LoadedModel& model) {
  TestDevice device;
  auto instance = model.instantiate(RankInfo{0, 1, &device});
  TestCallFrame frame(device, model.spec(), "echo");
  instance->call(frame);
  return Array::copyOf(frame.result(0)).toVector<int64_t>();
}

TEST_CASE("SDK options: the defaults and the given values shape the declarations", "[plugins]") {
  DllModelLoader loader;
  auto defaults = loader.load(pluginPath(kSized));
  const ModelSpec& spec = defaults->spec();
  CHECK(spec.variables[0].shape == Shape{3});
  CHECK(spec.variables[0].initial.toVector<float>() == std::vector<float>{0.5f, 0.5f, 0.5f});
  CHECK(spec.variables[1].initial.toVector<int64_t>() == std::vector<int64_t>{4, 2});
  std::vector<std::string> names, values;
  for (const OptionSpec& option : spec.options) {
    names.push_back(option.name);
    values.push_back(option.default_value);
  }
  CHECK(names == std::vector<std::string>{"width", "scale", "mode", "widths", "flag", "later"});
  CHECK(values == std::vector<std::string>{"3", "0.5", "sum", "4,2", "false", "x"});
  CHECK(spec.options[0].help == "length of v");

  auto given =
      loader.load(pluginPath(kSized), {{"width", "5"}, {"scale", "-2.25"}, {"widths", "7,8,9"}});
  CHECK(given->spec().variables[0].shape == Shape{5});
  CHECK(given->spec().variables[0].initial.toVector<float>()[4] == -2.25f);
  CHECK(given->spec().variables[1].initial.toVector<int64_t>() == std::vector<int64_t>{7, 8, 9});
  auto empty_list = loader.load(pluginPath(kSized), {{"widths", ""}});
  CHECK(empty_list->spec().variables[1].shape == Shape{0});
}

TEST_CASE("SDK options: the constructor reads the options the model was loaded with", "[plugins]") {
  DllModelLoader loader;
  CHECK(echo(*loader.load(pluginPath(kSized))) == std::vector<int64_t>{0, 0, 1, 0});
  auto model =
      loader.load(pluginPath(kSized), {{"mode", "max"}, {"flag", "yes"}, {"later", "abcd"}});
  CHECK(echo(*model) == std::vector<int64_t>{1, 1, 4, 0});
}

TEST_CASE("SDK options: a bad value is refused with the option and the reason", "[plugins]") {
  const auto [key, value, reason] = GENERATE(table<std::string, std::string, std::string>({
      {"width", "abc", "option 'width' is 'abc', not an integer"},
      {"width", "3x", "option 'width' is '3x', not an integer"},
      {"scale", "", "option 'scale' is '', not a number"},
      {"mode", "prod", "option 'mode' is 'prod'; choose one of sum, max"},
      {"widths", "1,,2", "option 'widths' is '1,,2', not a comma-separated integer list"},
      {"widths", "1,2,", "option 'widths' is '1,2,', not a comma-separated integer list"},
      {"flag", "maybe", "option 'flag' is 'maybe', not true or false"},
  }));
  INFO(key << "=" << value);
  const std::string file = std::filesystem::canonical(pluginPath(kSized)).string();
  CHECK(loadError(kSized, {{key, value}}) ==
        file + ": synk_plugin_v1.describe failed with SYNK_ERROR_INVALID_ARGUMENT: " + reason);
}

TEST_CASE("SDK options: an unknown key is refused naming every valid one", "[plugins]") {
  CHECK_THAT(loadError(kSized, {{"width", "4"}, {"depth", "2"}}),
             Catch::EndsWith(": model 'sized' has no option 'depth' (valid options: width, "
                             "scale, mode, widths, flag, later)"));
  // A model with the old `static Spec spec()` loads as before and accepts no options.
  CHECK_THAT(loadError("synk_test_sdk_probe", {{"width", "4"}}),
             Catch::EndsWith(": model 'sdk_probe' accepts no options; given 'width'"));
}

// What a 1.0 host's describe sink looks like to the SDK: no options, no add_option.
struct OldHost {
  std::vector<Shape> shapes;
  static synk_status setName(void*, const char*) { return SYNK_OK; }
  static synk_status addVariable(void* host, const synk_variable_decl* v) {
    static_cast<OldHost*>(host)->shapes.emplace_back(v->shape, v->shape + v->ndim);
    return SYNK_OK;
  }
  static synk_status addFunction(void*, const synk_function_decl*) { return SYNK_OK; }
};

TEST_CASE("SDK options: a plugin described by an ABI 1.0 host gets its defaults", "[plugins]") {
  void* library = dlopen(pluginPath(kSized).c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(library != nullptr);
  auto get = reinterpret_cast<synk_plugin_v1_get_fn>(dlsym(library, SYNK_PLUGIN_V1_GET_SYMBOL));
  REQUIRE(get != nullptr);
  OldHost host;
  synk_describe_sink sink{};
  sink.struct_size = offsetof(synk_describe_sink, n_options);  // as a 1.0 host compiled it
  sink.host = &host;
  sink.set_name = &OldHost::setName;
  sink.add_variable = &OldHost::addVariable;
  sink.add_function = &OldHost::addFunction;
  sink.add_option = nullptr;  // beyond struct_size: must not be read
  char error[256] = {};
  CHECK(get()->describe(&sink, error, sizeof error) == SYNK_OK);
  CHECK(host.shapes == std::vector<Shape>{{3}, {2}});
  dlclose(library);
}

TEST_CASE("a session loads a model with the same options on every rank", "[plugins]") {
  Session session = test::forkForTest(2);
  Model model =
      session.load(pluginPath(kSized), {{"width", "6"}, {"mode", "max"}, {"later", "abc"}});
  CHECK(model.options() == ModelOptions{{"later", "abc"}, {"mode", "max"}, {"width", "6"}});
  Function f = session.function(model, "echo", {.outputs = {{"settings", "gather"}}});
  CHECK(f({}).at(0).toVector<int64_t>() == std::vector<int64_t>{1, 0, 3, 0, 1, 0, 3, 1});
  // Rank 1 built its variable from the same options (a different shape would fail distribute).
  CHECK(session.getShapes({model.variable("v")}).at(0) == std::vector<Shape>{{6}, {6}});
  CHECK_THROWS_WITH(session.load(pluginPath(kSized), {{"depth", "2"}}),
                    Catch::Contains("has no option 'depth'"));
}

}  // namespace
}  // namespace synk
