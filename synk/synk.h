#pragma once
// The entry point most programs include: synk::fork() with the default backends (cpu, cuda)
// and the Boost.DLL model-plugin loader. Everything else is in core/session.h.
#include <string>

#include "synk/core/session.h"

namespace synk {

// Forks the ranks of a session (see ForkOptions). Call it before anything touches CUDA.
Session fork(const ForkOptions& options = {});

// Path of the plugin library "lib<name>.so", found on the plugin search path: $SYNK_PLUGIN_PATH,
// the installed plugin folder, the build's lib/, lib/ beside the program's bin/
// (core/plugin_search.h). Throws PluginError listing where it looked. Session::load takes the
// name itself too.
std::string pluginPath(const std::string& name);

}  // namespace synk
