#include "plugins/synk.h"

#include <unistd.h>

#include <climits>
#include <memory>

#include "collectives/registry.h"
#include "core/error.h"
#include "plugins/host/dll_model_loader.h"

namespace synk {

Session fork(const ForkOptions& options) {
  return forkSession(options, makeDefaultRegistry(), std::make_shared<DllModelLoader>());
}

std::string pluginPath(const std::string& name) {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw SystemError("readlink /proc/self/exe", errno);
  std::string dir(exe, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));  // .../bin
  dir = dir.substr(0, dir.rfind('/'));  // ...
  return str(dir, "/lib/lib", name, ".so");
}

}  // namespace synk
