#pragma once
// Loads model plugins (shared libraries exporting the C ABI of plugins/abi/synk_plugin.h) with
// Boost.DLL and presents them as core Models. See plugins/README.md for the seam's rules.
//
// Fork discipline: call load() in the master before fork (it maps the library and runs the
// plugin's describe, which touches no CUDA); call LoadedModel::instantiate() in each rank after
// fork. The library stays loaded while the LoadedModel or any ModelInstance made from it lives.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "synk/core/model_loader.h"

namespace synk {

// Receives what plugins log (level: SYNK_LOG_DEBUG .. SYNK_LOG_ERROR) as one line that already
// names the model and the rank. Called from the rank's threads; must be thread-safe.
using PluginLogSink = std::function<void(int32_t level, const std::string& line)>;

// Writes the line as it is through the library's log (core/log.h): stderr, or a test's sink, when
// the plugin's level passes SYNK_LOG_LEVEL (warning by default).
void logPluginToStderr(int32_t level, const std::string& line);

class DllModelLoader final : public ModelLoader {
 public:
  explicit DllModelLoader(PluginLogSink log = logPluginToStderr);

  // `path` is a file, or a plugin's name ("synk_example_intro", no '/' and no ".so") found on the
  // plugin search path (core/plugin_search.h). Throws PluginError naming the file (canonical
  // path), the symbol and the versions: file not found (for a name: every folder looked in), not
  // loadable (dlerror's text), a symbol missing, another ABI major, a table too small, describe
  // failing or declaring something invalid, an option key the model does not accept.
  std::shared_ptr<LoadedModel> load(const std::string& path,
                                    const ModelOptions& options = {}) override;

 private:
  PluginLogSink log_;
};

}  // namespace synk
