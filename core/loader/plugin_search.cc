#include "synk/core/plugin_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "synk/core/error.h"

#ifndef SYNK_INSTALL_PLUGIN_DIR
#error "SYNK_INSTALL_PLUGIN_DIR is set by core/CMakeLists.txt"
#endif
#ifndef SYNK_BUILD_PLUGIN_DIR
#error "SYNK_BUILD_PLUGIN_DIR is set by core/CMakeLists.txt"
#endif

namespace synk {
namespace {

// lib/ beside the running program's bin/, or "" when the program is not in a bin/ folder.
std::string besideProgram() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  std::string dir(exe, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));
  if (dir.size() < 4 || dir.compare(dir.size() - 4, 4, "/bin") != 0) return "";
  return dir.substr(0, dir.size() - 4) + "/lib";
}

bool isFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> pluginSearchPath() {
  std::vector<std::string> folders;
  auto add = [&](const std::string& folder) {
    if (folder.empty()) return;
    for (const std::string& known : folders) {
      if (known == folder) return;
    }
    folders.push_back(folder);
  };
  if (const char* env = std::getenv("SYNK_PLUGIN_PATH")) {
    const std::string list = env;
    size_t begin = 0;
    while (begin <= list.size()) {
      const size_t end = std::min(list.find(':', begin), list.size());
      add(list.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  add(SYNK_INSTALL_PLUGIN_DIR);
  add(SYNK_BUILD_PLUGIN_DIR);
  add(besideProgram());
  return folders;
}

bool isPluginName(const std::string& name_or_path) {
  const std::string suffix = ".so";
  const bool so =
      name_or_path.size() >= suffix.size() &&
      name_or_path.compare(name_or_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return !name_or_path.empty() && name_or_path.find('/') == std::string::npos && !so;
}

std::string findPlugin(const std::string& name) {
  const std::string file = str("lib", name, ".so");
  const std::vector<std::string> folders = pluginSearchPath();
  for (const std::string& folder : folders) {
    const std::string path = str(folder, "/", file);
    if (isFile(path)) return path;
  }
  std::string looked;
  for (const std::string& folder : folders)
    looked += str(looked.empty() ? "" : ", ", folder);
  const char* env = std::getenv("SYNK_PLUGIN_PATH");
  throw PluginError(str("plugin '", name, "' not found: no ", file, " in ", looked,
                        " (SYNK_PLUGIN_PATH ", env && *env ? str("is ", env) : "is not set",
                        "; then the installed and the build's plugin folders, then lib/ beside "
                        "the program's bin/)"));
}

}  // namespace synk
