#include "synk/plugins/host/dll_model_loader.h"

#include <utility>

#include "synk/core/log.h"
#include "synk/core/plugin_search.h"
#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/host/detail/dll_model.h"
#include "synk/plugins/host/detail/plugin_library.h"
#include "synk/plugins/host/detail/spec_collector.h"

namespace synk {

void logPluginToStderr(int32_t level, const std::string& line) {
  // The line names the rank, the level and the model already: no second prefix.
  const LogLevel ours = level >= SYNK_LOG_ERROR     ? LogLevel::Error
                        : level == SYNK_LOG_WARNING ? LogLevel::Warning
                        : level == SYNK_LOG_INFO    ? LogLevel::Info
                                                    : LogLevel::Debug;
  logLine(ours, line);
}

DllModelLoader::DllModelLoader(PluginLogSink log) : log_(std::move(log)) {}

std::shared_ptr<LoadedModel> DllModelLoader::load(const std::string& path,
                                                  const ModelOptions& options) {
  std::shared_ptr<const plugin_host::PluginLibrary> library =
      plugin_host::PluginLibrary::open(isPluginName(path) ? findPlugin(path) : path);
  auto raw = std::make_shared<const plugin_host::RawOptions>(options);
  ModelSpec spec = plugin_host::describeModel(*library, *raw);
  return std::make_shared<plugin_host::DllModel>(std::move(library), std::move(spec),
                                                 std::move(raw), log_);
}

}  // namespace synk
