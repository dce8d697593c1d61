#include "synk/collectives/cuda_loader.h"

#include <dlfcn.h>

#include <mutex>

#include "synk/collectives/cuda_module.h"
#include "synk/core/error.h"
#include "synk/core/plugin_search.h"

namespace synk {
namespace {

class CudaBackendLoader final : public BackendFactory {
 public:
  std::string name() const override { return "cuda"; }

  bool isViable(std::string* why) const override {
    BackendFactory* real = load();
    if (!real) {
      if (why) *why = error_;
      return false;
    }
    return real->isViable(why);
  }

  int deviceCount() const override {
    BackendFactory* real = load();
    return real ? real->deviceCount() : 0;
  }
  bool bindsDevices() const override { return true; }

  void checkBeforeFork() const override {
    if (BackendFactory* real = load()) real->checkBeforeFork();
  }

  // The module's copy of synk logs and times its phases through this program's.
  void linkHost(const SynkHostLink& link) override {
    if (BackendFactory* real = load()) real->linkHost(link);
  }

  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    BackendFactory* real = load();
    if (!real) throw UsageError(str("backend 'cuda' is not available: ", error_));
    return real->create(env);
  }

 private:
  // Loads the library once; nullptr (and error_ says why) when it cannot be used.
  BackendFactory* load() const {
    std::call_once(loaded_, [this] {
      try {
        real_ = open();
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    });
    return real_.get();
  }

  static std::unique_ptr<BackendFactory> open() {
#if !SYNK_HAVE_CUDA_BACKEND
    throw UsageError(
        "synk was built without CUDA (no nvcc with NCCL and cuBLAS found at configure time)");
#else
    const std::string file = findPlugin(SYNK_CUDA_BACKEND_LIBRARY);
    ::dlerror();
    // Never closed: CUDA's libraries do not unload cleanly, and the factory's objects (and the
    // sessions made with them) may live until exit.
    void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      throw UsageError(str("cannot load the cuda backend ", file, ": ", why ? why : "unknown",
                           " (are CUDA's libraries libcudart, libcublas and libnccl installed "
                           "and on the library path?)"));
    }
    using Build = const char* (*)();
    using Make = BackendFactory* (*)();
    auto build = reinterpret_cast<Build>(dlsym(library, SYNK_CUDA_BACKEND_BUILD_SYMBOL));
    auto make = reinterpret_cast<Make>(dlsym(library, SYNK_CUDA_BACKEND_FACTORY_SYMBOL));
    if (!build || !make) {
      throw UsageError(str(file, " does not export ", SYNK_CUDA_BACKEND_BUILD_SYMBOL, " and ",
                           SYNK_CUDA_BACKEND_FACTORY_SYMBOL, ": not synk's cuda backend"));
    }
    if (std::string(build()) != SYNK_BUILD_STAMP) {
      throw UsageError(str(file, " comes from another synk build (", build(),
                           "; this program: ", SYNK_BUILD_STAMP,
                           "): point SYNK_PLUGIN_PATH at the lib/ of the build it was linked "
                           "against"));
    }
    return std::unique_ptr<BackendFactory>(make());
#endif
  }

  mutable std::once_flag loaded_;
  mutable std::unique_ptr<BackendFactory> real_;
  mutable std::string error_;
};

}  // namespace

std::unique_ptr<BackendFactory> makeCudaBackendLoader() {
  return std::make_unique<CudaBackendLoader>();
}

}  // namespace synk
