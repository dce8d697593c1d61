#pragma once
// Where synk finds a shared library named rather than given by path: model plugins
// (Session::load("synk_example_intro")) and the cuda backend (libsynk_cuda_backend.so). A name
// "x" means the file "libx.so", looked for in
//   1. each folder of $SYNK_PLUGIN_PATH (colon-separated), in order;
//   2. the installed plugin folder, <install prefix>/lib/synk (fixed when synk was configured);
//   3. the library folder of the build tree synk was built in (build/lib);
//   4. lib/ beside the running program's bin/ folder (a build tree or bundle moved elsewhere).
// The first file found wins; none found is an error that lists every folder looked in.
#include <string>
#include <vector>

namespace synk {

// The folders, in search order (empty entries of SYNK_PLUGIN_PATH skipped).
std::vector<std::string> pluginSearchPath();
// True for a plugin name ("synk_testkit"), false for a path (contains '/' or ends in ".so").
bool isPluginName(const std::string& name_or_path);
// The first lib<name>.so on the search path. Throws PluginError naming the file and the folders.
std::string findPlugin(const std::string& name);

}  // namespace synk
