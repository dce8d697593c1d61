#include "synk/plugins/host/detail/plugin_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

#include "synk/core/error.h"

namespace synk::plugin_host {
namespace {

namespace fs = std::filesystem;

std::string canonicalPath(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw PluginError(str("model plugin '", path, "' not found (current directory ",
                          fs::current_path(ec).string(), ")"));
  }
  if (fs::is_directory(status)) {
    throw PluginError(str("model plugin '", path, "' is a directory, not a shared library"));
  }
  const fs::path canonical = fs::canonical(path, ec);
  if (ec) throw PluginError(str("model plugin '", path, "': cannot resolve it: ", ec.message()));
  return canonical.string();
}

boost::dll::shared_library loadLibrary(const std::string& file) {
  boost::dll::shared_library library;
  boost::dll::fs::error_code ec;
  ::dlerror();  // clear a stale message so the one read below is this load's
  library.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !library.is_loaded()) {
    const char* why = ::dlerror();
    throw PluginError(str("cannot load model plugin ", file, ": ", why ? why : ec.message(),
                          " (not a shared library for this machine, or a library or symbol it "
                          "needs is missing)"));
  }
  return library;
}

}  // namespace

std::string versionString(uint32_t version) {
  return str(SYNK_PLUGIN_ABI_VERSION_MAJOR(version), ".", SYNK_PLUGIN_ABI_VERSION_MINOR(version));
}

std::string statusName(synk_status status) {
  switch (status) {
    case SYNK_OK:
      return "SYNK_OK";
    case SYNK_ERROR_INVALID_ARGUMENT:
      return "SYNK_ERROR_INVALID_ARGUMENT";
    case SYNK_ERROR_UNSUPPORTED:
      return "SYNK_ERROR_UNSUPPORTED";
    case SYNK_ERROR_OUT_OF_MEMORY:
      return "SYNK_ERROR_OUT_OF_MEMORY";
    case SYNK_ERROR_DEVICE:
      return "SYNK_ERROR_DEVICE";
    case SYNK_ERROR_INTERNAL:
      return "SYNK_ERROR_INTERNAL";
  }
  return str("status ", status);
}

std::shared_ptr<const PluginLibrary> PluginLibrary::open(const std::string& path) {
  std::shared_ptr<PluginLibrary> plugin(new PluginLibrary());
  const std::string file = canonicalPath(path);
  plugin->path_ = file;
  plugin->library_ = loadLibrary(file);
  boost::dll::shared_library& library = plugin->library_;
  const std::string host_version = versionString(SYNK_PLUGIN_ABI_VERSION);

  // The version symbol comes first so that a plugin of another major gets a precise message
  // before anything of its table is interpreted.
  if (!library.has(SYNK_PLUGIN_ABI_VERSION_SYMBOL)) {
    throw PluginError(str(file, " does not export ", SYNK_PLUGIN_ABI_VERSION_SYMBOL,
                          "(): not a synk model plugin (plugins export it with SYNK_PLUGIN(Class) "
                          "from plugins/sdk/synk_sdk.h; this host supports ABI ",
                          SYNK_PLUGIN_ABI_MAJOR, ".x)"));
  }
  const uint32_t version = library.get<uint32_t()>(SYNK_PLUGIN_ABI_VERSION_SYMBOL)();
  plugin->version_ = version;
  const std::string plugin_version = versionString(version);
  if (SYNK_PLUGIN_ABI_VERSION_MAJOR(version) != SYNK_PLUGIN_ABI_MAJOR) {
    throw PluginError(str(file, " was built for synk plugin ABI ", plugin_version,
                          "; this host supports ", SYNK_PLUGIN_ABI_MAJOR, ".x (",
                          SYNK_PLUGIN_ABI_VERSION_SYMBOL, "() returned ", plugin_version,
                          "); rebuild the plugin against this synk's plugins/abi/synk_plugin.h"));
  }
  if (!library.has(SYNK_PLUGIN_V1_GET_SYMBOL)) {
    throw PluginError(str(file, " reports synk plugin ABI ", plugin_version,
                          " but does not export ", SYNK_PLUGIN_V1_GET_SYMBOL,
                          "(), the entry point of ABI ", SYNK_PLUGIN_ABI_MAJOR, ".x"));
  }
  const synk_plugin_v1* table = library.get<const synk_plugin_v1*()>(SYNK_PLUGIN_V1_GET_SYMBOL)();
  const std::string where = str(file, ": ", SYNK_PLUGIN_V1_GET_SYMBOL, "()");
  if (!table) throw PluginError(str(where, " returned NULL (plugin ABI ", plugin_version, ")"));
  // Every ABI 1.x table has at least the 1.0 fields; later minors only append.
  if (table->struct_size < sizeof(synk_plugin_v1)) {
    throw PluginError(str(where, " returned a table with struct_size ", table->struct_size,
                          "; synk_plugin_v1 of ABI ", host_version, " has ", sizeof(synk_plugin_v1),
                          " bytes (plugin reports ABI ", plugin_version, ", host ", host_version,
                          ")"));
  }
  if (table->abi_version != version) {
    throw PluginError(str(where, " returned a table of ABI ", versionString(table->abi_version),
                          " but ", SYNK_PLUGIN_ABI_VERSION_SYMBOL, "() reports ", plugin_version,
                          " (mixed headers at build time?)"));
  }
  const std::pair<const char*, const void*> entries[] = {
      {"describe", reinterpret_cast<const void*>(table->describe)},
      {"create", reinterpret_cast<const void*>(table->create)},
      {"call", reinterpret_cast<const void*>(table->call)},
      {"last_error", reinterpret_cast<const void*>(table->last_error)},
      {"destroy", reinterpret_cast<const void*>(table->destroy)},
  };
  for (const auto& [name, pointer] : entries) {
    if (!pointer) throw PluginError(str(where, ": synk_plugin_v1.", name, " is NULL"));
  }
  plugin->table_ = table;
  return plugin;
}

}  // namespace synk::plugin_host
