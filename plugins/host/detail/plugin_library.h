#pragma once
// One loaded and validated plugin library (private to plugins/host). The LoadedModel and every
// ModelInstance made from it share it, so the code stays mapped while any of them lives.
#include <cstdint>
#include <memory>
#include <string>

#include <boost/dll/shared_library.hpp>

#include "synk/plugins/abi/synk_plugin.h"

namespace synk::plugin_host {

class PluginLibrary {
 public:
  // Loads `path` with RTLD_NOW | RTLD_LOCAL (an unresolved symbol fails here, never mid-run),
  // reads synk_plugin_abi_version first, then the table, and validates both.
  // Throws PluginError naming the file, the symbol and the versions.
  static std::shared_ptr<const PluginLibrary> open(const std::string& path);

  const std::string& path() const { return path_; }  // canonical
  const synk_plugin_v1& table() const { return *table_; }
  uint32_t version() const { return version_; }  // as the plugin reports it

 private:
  PluginLibrary() = default;

  boost::dll::shared_library library_;
  std::string path_;
  const synk_plugin_v1* table_ = nullptr;  // points into library_
  uint32_t version_ = 0;
};

// "1.0" for 0x00010000.
std::string versionString(uint32_t version);
// "SYNK_ERROR_INVALID_ARGUMENT", or "status 42" for a code the ABI does not define.
std::string statusName(synk_status status);

}  // namespace synk::plugin_host
