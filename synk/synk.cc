#include "synk/synk.h"

#include <memory>

#include "synk/cluster/launch_env.h"
#include "synk/collectives/registry.h"
#include "synk/core/plugin_search.h"
#include "synk/plugins/host/dll_model_loader.h"

namespace synk {

Session fork(const ForkOptions& options) {
  cluster::refuseSeveralProcesses(cluster::processEnvironment());
  return forkSession(options, makeDefaultRegistry(), std::make_shared<DllModelLoader>());
}

std::string pluginPath(const std::string& name) {
  return findPlugin(name);
}

}  // namespace synk
