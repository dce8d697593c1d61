// DllModelLoader against deliberately broken plugins (each message must name the file, the
// symbol and the versions) and against the valid C plugin "raw" (spec round trip, calls,
// services, library lifetime).
#include "synk/plugins/host/dll_model_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "synk/core/log.h"
#include "synk/plugins/abi/synk_plugin.h"
#include "tests/plugins/plugin_test_support.h"

namespace synk {
namespace {

using testing::pluginPath;
using testing::TestCallFrame;
using testing::TestDevice;

// This header's ABI version, "1.2".
const std::string kAbi =
    std::to_string(SYNK_PLUGIN_ABI_MAJOR) + "." + std::to_string(SYNK_PLUGIN_ABI_MINOR);

std::string canonical(const std::string& target) {
  return std::filesystem::canonical(pluginPath(target)).string();
}

// The PluginError message of loading `path`; fails the test if loading succeeds.
std::string loadError(const std::string& path) {
  DllModelLoader loader;
  try {
    loader.load(path);
  } catch (const PluginError& e) {
    return e.what();
  }
  FAIL("loading " << path << " succeeded");
  return {};
}

std::string loadErrorOf(const std::string& target) {
  return loadError(pluginPath(target));
}

TEST_CASE("a missing file is reported by its path", "[plugins]") {
  const std::string path = std::string(SYNK_PLUGIN_DIR) + "/libsynk_no_such_plugin.so";
  const std::string message = loadError(path);
  CHECK_THAT(message, Catch::Contains(path) && Catch::Contains("not found"));
}

TEST_CASE("a directory is not a shared library", "[plugins]") {
  CHECK_THAT(loadError(SYNK_PLUGIN_DIR), Catch::Contains("is a directory"));
}

TEST_CASE("a file that is not a shared library gives dlerror's reason", "[plugins]") {
  // Per process: build trees tested side by side must not remove each other's file.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("synk_plugin_loader_test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "libnot_a_library.so";
  std::ofstream(file) << std::string(256, 'x') << "\n";
  const std::string message = loadError(file.string());
  std::filesystem::remove_all(dir);
  CHECK_THAT(message, Catch::Contains("cannot load model plugin " + file.string()) &&
                          Catch::Contains("invalid ELF header"));
}

TEST_CASE("an unresolved symbol fails at load time (RTLD_NOW) and not mid-run", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_unresolved");
  CHECK_THAT(message,
             Catch::Contains(canonical("synk_test_raw_unresolved")) &&
                 Catch::Contains("undefined symbol: synk_test_symbol_that_does_not_exist"));
}

TEST_CASE("another ABI major is refused naming file and symbol and both versions", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_abi2");
  CHECK_THAT(message, Catch::StartsWith(canonical("synk_test_raw_abi2")) &&
                          Catch::Contains("was built for synk plugin ABI 2.0; this host supports "
                                          "1.x") &&
                          Catch::Contains("synk_plugin_abi_version() returned 2.0"));
}

TEST_CASE("a library without the version symbol is not a synk plugin", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_no_version");
  CHECK_THAT(message, Catch::StartsWith(canonical("synk_test_raw_no_version")) &&
                          Catch::Contains("does not export synk_plugin_abi_version()") &&
                          Catch::Contains("1.x"));
}

TEST_CASE("a library without the table symbol names it and its version", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_no_get");
  CHECK_THAT(message, Catch::StartsWith(canonical("synk_test_raw_no_get")) &&
                          Catch::Contains("reports synk plugin ABI " + kAbi) &&
                          Catch::Contains("does not export synk_plugin_v1_get()"));
}

TEST_CASE("a table with a too small struct_size is refused", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_small_table");
  CHECK_THAT(message, Catch::StartsWith(canonical("synk_test_raw_small_table")) &&
                          Catch::Contains("synk_plugin_v1_get() returned a table with "
                                          "struct_size 8") &&
                          Catch::Contains("plugin reports ABI " + kAbi + ", host " + kAbi));
}

TEST_CASE("a table with a NULL entry is refused", "[plugins]") {
  CHECK_THAT(loadErrorOf("synk_test_raw_null_call"),
             Catch::Contains("synk_plugin_v1.call is NULL"));
}

TEST_CASE("a failing describe reports its code and message", "[plugins]") {
  const std::string message = loadErrorOf("synk_test_raw_describe_fails");
  CHECK(message == canonical("synk_test_raw_describe_fails") +
                       ": synk_plugin_v1.describe failed with SYNK_ERROR_INTERNAL: raw test "
                       "plugin: describe refused by request");
}

TEST_CASE("invalid declarations are refused with the reason", "[plugins]") {
  const auto [variant, reason] = GENERATE(table<std::string, std::string>({
      {"invalid_dtype", "variable 'w': unknown dtype code 42 (ABI " + kAbi + " defines 0..6)"},
      {"invalid_duplicate_variable", "variable 'w' is declared twice"},
      {"invalid_ndim", "function 'add', input 'a' has ndim 17; allowed 0..16"},
      {"invalid_reads_unknown",
       "function 'add' reads unknown variable 'nope' (declared "
       "variables: w, counter)"},
      {"invalid_updates_unknown",
       "function 'add' updates unknown variable 'ghost' (declared "
       "variables: w, counter)"},
      {"invalid_initial_size",
       "variable 'w': initial value has 4 bytes; shape (3,) of float64 "
       "needs 24"},
      {"invalid_duplicate_function", "function 'add' is declared twice"},
      {"invalid_negative_dim", "variable 'w' has a negative dimension in shape (-3,)"},
      {"invalid_option_twice", "option 'alpha' is declared twice"},
  }));
  const std::string target = "synk_test_raw_" + variant;
  INFO(target);
  CHECK(loadErrorOf(target) ==
        canonical(target) + ": synk_plugin_v1.describe declared an invalid model: " + reason);
}

TEST_CASE("a model without a name is refused", "[plugins]") {
  CHECK_THAT(loadErrorOf("synk_test_raw_invalid_no_name"),
             Catch::Contains("synk_plugin_v1.describe declared no model name"));
}

TEST_CASE("a failing create reports model and file and rank and device and message", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_raw_create_fails"));
  TestDevice device;
  try {
    model->instantiate(RankInfo{1, 2, &device});
    FAIL("create succeeded");
  } catch (const PluginError& e) {
    CHECK(std::string(e.what()) ==
          "model 'raw' (" + canonical("synk_test_raw_create_fails") +
              "): create failed on rank 1 of 2 (cpu) with SYNK_ERROR_UNSUPPORTED: raw test "
              "plugin: create refused on rank 1 by request");
  }
  CHECK(device.live() == 0);
}

TEST_CASE("the spec of a C plugin survives the round trip", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_raw_ok"));
  CHECK(model->source() == canonical("synk_test_raw_ok"));
  const ModelSpec& spec = model->spec();
  CHECK(spec.name == "raw");
  REQUIRE(spec.variables.size() == 2);
  const VariableSpec& w = spec.variables[0];
  CHECK(w.name == "w");
  CHECK(w.dtype == DType::Float64);
  CHECK(w.shape == Shape{3});
  CHECK(w.kind == VariableKind::Mirrored);
  CHECK(w.initial.toVector<double>() == std::vector<double>{1, 2, 3});
  const VariableSpec& counter = spec.variables[1];
  CHECK(counter.name == "counter");
  CHECK(counter.dtype == DType::Int64);
  CHECK(counter.shape.empty());
  CHECK(counter.kind == VariableKind::RankLocal);
  CHECK(counter.local_reduction == LocalReduction::Mean);
  CHECK(counter.initial.empty());
  REQUIRE(spec.functions.size() == 1);
  const FunctionSpec& add = spec.functions[0];
  CHECK(add.name == "add");
  REQUIRE(add.inputs.size() == 1);
  CHECK((add.inputs[0].name == "a" && add.inputs[0].dtype == DType::Float64 &&
         add.inputs[0].ndim == 1));
  REQUIRE(add.outputs.size() == 1);
  CHECK((add.outputs[0].name == "sum" && add.outputs[0].ndim == 1));
  CHECK(add.reads == std::vector<std::string>{"w", "counter"});
  CHECK(add.updates == std::vector<std::string>{"counter"});
}

TEST_CASE("load options reach describe and the declared ones are listed", "[plugins]") {
  DllModelLoader loader;
  auto defaults = loader.load(pluginPath("synk_test_raw_ok"));
  CHECK(defaults->spec().variables[0].initial.toVector<double>() == std::vector<double>{1, 2, 3});
  REQUIRE(defaults->spec().options.size() == 1);
  const OptionSpec& alpha = defaults->spec().options[0];
  CHECK((alpha.name == "alpha" && alpha.default_value == "1" &&
         alpha.help == "first initial value of w"));
  auto given = loader.load(pluginPath("synk_test_raw_ok"), {{"alpha", "-7.5"}});
  CHECK(given->spec().variables[0].initial.toVector<double>() == std::vector<double>{-7.5, 2, 3});
}

TEST_CASE("an option the model does not declare is refused naming the valid ones", "[plugins]") {
  DllModelLoader loader;
  try {
    loader.load(pluginPath("synk_test_raw_ok"), {{"alpha", "2"}, {"beta", "3"}});
    FAIL("an unknown option was accepted");
  } catch (const PluginError& e) {
    CHECK(std::string(e.what()) == canonical("synk_test_raw_ok") +
                                       ": model 'raw' has no option 'beta' (valid options: alpha)");
  }
}

TEST_CASE("an ABI 1.0 plugin still loads and refuses every option", "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_raw_abi10"));
  CHECK(model->spec().name == "raw");
  CHECK(model->spec().options.empty());
  TestDevice device;
  CHECK(model->instantiate(RankInfo{0, 1, &device}) != nullptr);
  try {
    loader.load(pluginPath("synk_test_raw_abi10"), {{"alpha", "2"}});
    FAIL("a 1.0 plugin accepted an option");
  } catch (const PluginError& e) {
    CHECK(std::string(e.what()) ==
          canonical("synk_test_raw_abi10") + ": model 'raw' accepts no options; given 'alpha'");
  }
}

struct RawCall {
  Array a = Array::vector<double>({10, 20, 30});
  Array w = Array::vector<double>({1, 2, 3});
  Array counter = Array::scalar<int64_t>(4);
  Array counter_new = Array::scalar<int64_t>(0);

  void bind(TestCallFrame& frame) {
    frame.inputs = {TestCallFrame::ref(a)};
    frame.reads = {TestCallFrame::ref(w), TestCallFrame::ref(counter)};
    frame.updates = {TestCallFrame::ref(counter_new)};
  }
};

TEST_CASE("a call reaches the plugin with tensors and outputs and host services", "[plugins]") {
  testing::LogRecorder log;
  DllModelLoader loader(log.sink());
  auto model = loader.load(pluginPath("synk_test_raw_ok"));
  TestDevice device;
  {
    auto instance = model->instantiate(RankInfo{0, 1, &device});
    TestCallFrame frame(device, model->spec(), "add");
    RawCall values;
    values.bind(frame);
    instance->call(frame);
    CHECK(Array::copyOf(frame.result(0)).toVector<double>() == std::vector<double>{11, 22, 33});
    CHECK(values.counter_new.toVector<int64_t>() == std::vector<int64_t>{5});
    CHECK(values.counter.toVector<int64_t>() == std::vector<int64_t>{4});  // not written in place
    CHECK(log.contains("[synk rank 0 info] model 'raw': raw: add done"));
    CHECK(device.live() == 1);  // the output; the plugin's scratch buffer was released
  }
  CHECK(device.live() == 0);
}

TEST_CASE("the default plugin log writes each line as it is, at the plugin's level", "[plugins]") {
  std::vector<std::pair<LogLevel, std::string>> lines;
  ScopedLogSink sink(
      [&](LogLevel level, std::string_view line) { lines.emplace_back(level, std::string(line)); });
  const LogLevel threshold = logThreshold();
  setLogThreshold(LogLevel::Info);
  logPluginToStderr(SYNK_LOG_DEBUG, "[synk rank 1 debug] model 'm': hidden at info");
  logPluginToStderr(SYNK_LOG_INFO, "[synk rank 1 info] model 'm': shown");
  logPluginToStderr(SYNK_LOG_WARNING, "[synk rank 1 warning] model 'm': w");
  logPluginToStderr(SYNK_LOG_ERROR, "[synk rank 1 error] model 'm': e");
  setLogThreshold(threshold);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == std::pair(LogLevel::Info, std::string("[synk rank 1 info] model 'm': shown")));
  CHECK(lines[1].first == LogLevel::Warning);
  CHECK(lines[2].first == LogLevel::Error);
  CHECK(lines[2].second == "[synk rank 1 error] model 'm': e");
}

TEST_CASE("a failing call names model and file and function and carries the plugin's message",
          "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_raw_ok"));
  TestDevice device;
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  TestCallFrame frame(device, model->spec(), "add");
  RawCall values;
  values.a = Array::vector<double>({1, 2});
  values.bind(frame);
  try {
    instance->call(frame);
    FAIL("the call succeeded");
  } catch (const PluginError& e) {
    CHECK(std::string(e.what()) == "model 'raw' (" + canonical("synk_test_raw_ok") +
                                       "): function 'add' failed: input 'a' has 2 elements; w "
                                       "has 3");
  }
}

TEST_CASE("a frame that does not match the declaration is refused before the plugin runs",
          "[plugins]") {
  DllModelLoader loader;
  auto model = loader.load(pluginPath("synk_test_raw_ok"));
  TestDevice device;
  auto instance = model->instantiate(RankInfo{0, 1, &device});
  TestCallFrame frame(device, model->spec(), "add");
  RawCall values;
  values.bind(frame);
  SECTION("wrong input dtype") {
    Array floats = Array::vector<float>({1, 2, 3});
    frame.inputs = {TestCallFrame::ref(floats)};
    CHECK_THROWS_WITH(instance->call(frame),
                      Catch::Contains("input 'a' is float32 (3,); declared float64 with ndim 1"));
  }
  SECTION("missing read") {
    frame.reads.pop_back();
    CHECK_THROWS_WITH(instance->call(frame), Catch::Contains("declares 2 reads; the call has 1"));
  }
  SECTION("unknown function") {
    frame.function = 7;
    CHECK_THROWS_AS(instance->call(frame), InvalidArgument);
  }
}

TEST_CASE("the library stays loaded while an instance lives", "[plugins]") {
  const std::string file = canonical("synk_test_raw_ok");
  auto mapped = [&] {
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle) dlclose(handle);
    return handle != nullptr;
  };
  REQUIRE_FALSE(mapped());
  TestDevice device;
  std::unique_ptr<ModelInstance> instance;
  {
    DllModelLoader loader;
    auto model = loader.load(file);
    instance = model->instantiate(RankInfo{0, 1, &device});
    TestCallFrame frame(device, model->spec(), "add");
    RawCall values;
    values.bind(frame);
    instance->call(frame);
  }  // loader and model gone
  CHECK(mapped());
  instance.reset();
  CHECK_FALSE(mapped());
}

}  // namespace
}  // namespace synk
