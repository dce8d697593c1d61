#pragma once
// The host side of describe (private to plugins/host): a synk_describe_sink whose callbacks copy
// and validate each declaration into a core ModelSpec.
#include <string>

#include "core/model.h"
#include "plugins/abi/synk_plugin.h"
#include "plugins/host/detail/plugin_library.h"

namespace synk::plugin_host {

// Calls the plugin's describe and returns the validated spec. Throws PluginError naming the
// file, "synk_plugin_v1.describe" and the first invalid declaration.
ModelSpec describeModel(const PluginLibrary& library);

class SpecCollector {
 public:
  // The sink's callbacks point at this object: keep it alive (and unmoved) during describe.
  synk_describe_sink sink();
  // After describe returned `status` with `message`: the spec, or throws PluginError.
  ModelSpec finish(const std::string& file, synk_status status, const char* message);

 private:
  static synk_status setName(void* host, const char* name) noexcept;
  static synk_status addVariable(void* host, const synk_variable_decl* variable) noexcept;
  static synk_status addFunction(void* host, const synk_function_decl* function) noexcept;
  // Runs one declaration's copy; a throw records the first error and returns its code.
  template <typename Fn>
  synk_status record(Fn&& fn) noexcept;

  void takeName(const char* name);
  void takeVariable(const synk_variable_decl& decl);
  void takeFunction(const synk_function_decl& decl);
  void checkReferences() const;

  ModelSpec spec_;
  bool named_ = false;
  std::string first_error_;
};

}  // namespace synk::plugin_host
