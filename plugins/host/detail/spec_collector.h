#pragma once
// The host side of describe (private to plugins/host): a synk_describe_sink whose callbacks copy
// and validate each declaration into a core ModelSpec.
#include <string>
#include <vector>

#include "synk/core/model.h"
#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/host/detail/plugin_library.h"

namespace synk::plugin_host {

// Load options as the ABI passes them (synk_option), pointing into a copy of the map this
// object owns: keep it alive while the plugin may read them (describe; create until destroy).
class RawOptions {
 public:
  explicit RawOptions(ModelOptions values);
  RawOptions(const RawOptions&) = delete;
  RawOptions& operator=(const RawOptions&) = delete;
  const ModelOptions& values() const { return values_; }
  uint32_t count() const { return static_cast<uint32_t>(items_.size()); }
  const synk_option* data() const { return items_.empty() ? nullptr : items_.data(); }

 private:
  ModelOptions values_;
  std::vector<synk_option> items_;
};

// Calls the plugin's describe with `options` and returns the validated spec. Throws PluginError
// naming the file, "synk_plugin_v1.describe" and the first invalid declaration, or an option key
// the model does not accept (with the keys it accepts).
ModelSpec describeModel(const PluginLibrary& library, const RawOptions& options);

class SpecCollector {
 public:
  // The sink's callbacks point at this object and at `options`: keep both alive (and unmoved)
  // during describe.
  synk_describe_sink sink(const RawOptions& options);
  // After describe returned `status` with `message`: the spec, or throws PluginError.
  ModelSpec finish(const std::string& file, synk_status status, const char* message,
                   const ModelOptions& given);

 private:
  static synk_status setName(void* host, const char* name) noexcept;
  static synk_status addVariable(void* host, const synk_variable_decl* variable) noexcept;
  static synk_status addFunction(void* host, const synk_function_decl* function) noexcept;
  static synk_status addOption(void* host, const synk_option_decl* option) noexcept;
  // Runs one declaration's copy; a throw records the first error and returns its code.
  template <typename Fn>
  synk_status record(Fn&& fn) noexcept;

  void takeName(const char* name);
  void takeVariable(const synk_variable_decl& decl);
  void takeFunction(const synk_function_decl& decl);
  void takeOption(const synk_option_decl& decl);
  void checkReferences() const;
  void checkOptions(const ModelOptions& given) const;

  ModelSpec spec_;
  bool named_ = false;
  std::string first_error_;
};

}  // namespace synk::plugin_host
