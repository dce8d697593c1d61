#pragma once
// The entry point most programs include: synk::fork() with the default backends (cpu, cuda)
// and the Boost.DLL model-plugin loader. Everything else is in core/session.h.
#include <string>

#include "core/session.h"

namespace synk {

// Forks the ranks of a session (see ForkOptions). Call it before anything touches CUDA.
Session fork(const ForkOptions& options = {});

// Path of one of synk's own plugin libraries, "lib<name>.so", in the lib/ directory next to the
// running executable's bin/ directory (the build tree's layout).
std::string pluginPath(const std::string& name);

}  // namespace synk
