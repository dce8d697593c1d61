// Plugins by name: SYNK_PLUGIN_PATH first, then the installed folder, then the build's, then
// lib/ beside the program; a name not found lists every folder looked in.
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "synk/core/error.h"
#include "synk/core/plugin_search.h"
#include "synk/plugins/host/dll_model_loader.h"
#include "synk/synk.h"

using namespace synk;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// A temporary folder holding libsynk_renamed.so, a link to the intro example plugin.
struct RenamedPlugin {
  fs::path folder;
  RenamedPlugin() {
    folder = fs::temp_directory_path() / ("synk-plugin-search-" + std::to_string(getpid()));
    fs::create_directories(folder);
    fs::create_symlink(fs::path(SYNK_PLUGIN_DIR) / "libsynk_example_intro.so",
                       folder / "libsynk_renamed.so");
  }
  ~RenamedPlugin() { fs::remove_all(folder); }
};

}  // namespace

TEST_CASE("a plugin is a name unless it has a '/' or ends in .so", "[plugins]") {
  CHECK(isPluginName("synk_testkit"));
  CHECK_FALSE(isPluginName("libsynk_testkit.so"));
  CHECK_FALSE(isPluginName("./synk_testkit"));
  CHECK_FALSE(isPluginName("/opt/x/libm.so"));
  CHECK_FALSE(isPluginName(""));
}

TEST_CASE("names are found on SYNK_PLUGIN_PATH first, then in the build's folder", "[plugins]") {
  unsetenv("SYNK_PLUGIN_PATH");
  CHECK(pluginPath("synk_example_intro") ==
        std::string(SYNK_PLUGIN_DIR) + "/libsynk_example_intro.so");
  RenamedPlugin renamed;
  const std::string path = "/nonexistent/synk:" + renamed.folder.string();
  setenv("SYNK_PLUGIN_PATH", path.c_str(), 1);
  CHECK(pluginPath("synk_renamed") == (renamed.folder / "libsynk_renamed.so").string());
  CHECK(pluginSearchPath().at(0) == "/nonexistent/synk");
  CHECK(pluginSearchPath().at(1) == renamed.folder.string());
  // The loader takes the name itself, and reports the file it found.
  DllModelLoader loader;
  auto model = loader.load("synk_renamed");
  CHECK(model->spec().name == "intro");
  CHECK(model->source() == fs::canonical(renamed.folder / "libsynk_renamed.so").string());
  unsetenv("SYNK_PLUGIN_PATH");
}

TEST_CASE("a plugin name not found lists every folder looked in", "[plugins][errors]") {
  setenv("SYNK_PLUGIN_PATH", "/nonexistent/a:/nonexistent/b", 1);
  try {
    pluginPath("synk_no_such_plugin");
    FAIL("no exception");
  } catch (const PluginError& e) {
    CHECK_THAT(std::string(e.what()),
               Contains("plugin 'synk_no_such_plugin' not found") &&
                   Contains("libsynk_no_such_plugin.so") && Contains("/nonexistent/a") &&
                   Contains("/nonexistent/b") && Contains(SYNK_PLUGIN_DIR) &&
                   Contains("SYNK_PLUGIN_PATH is /nonexistent/a:/nonexistent/b"));
  }
  CHECK_THROWS_WITH(DllModelLoader().load("synk_no_such_plugin"),
                    Contains("plugin 'synk_no_such_plugin' not found"));
  unsetenv("SYNK_PLUGIN_PATH");
}
