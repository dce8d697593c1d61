#pragma once
// A loaded plugin as a core LoadedModel, and one rank's instance of it (private to plugins/host).
#include <exception>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

#include "synk/core/error.h"
#include "synk/core/model_loader.h"
#include "synk/plugins/abi/synk_plugin.h"
#include "synk/plugins/host/detail/plugin_library.h"
#include "synk/plugins/host/detail/spec_collector.h"
#include "synk/plugins/host/dll_model_loader.h"

namespace synk::plugin_host {

const char* levelName(int32_t level);  // "debug" .. "error"

class DllModel final : public LoadedModel {
 public:
  DllModel(std::shared_ptr<const PluginLibrary> library, ModelSpec spec,
           std::shared_ptr<const RawOptions> options, PluginLogSink log);

  const ModelSpec& spec() const override { return *spec_; }
  const std::string& source() const override { return library_->path(); }
  std::unique_ptr<ModelInstance> instantiate(const RankInfo& info) override;

 private:
  std::shared_ptr<const PluginLibrary> library_;
  std::shared_ptr<const ModelSpec> spec_;      // shared with instances, which may outlive the model
  std::shared_ptr<const RawOptions> options_;  // the load options every create gets
  PluginLogSink log_;
};

class DllModelInstance final : public ModelInstance {
 public:
  // Runs the plugin's create on info.device; throws PluginError with the plugin's message.
  DllModelInstance(std::shared_ptr<const PluginLibrary> library,
                   std::shared_ptr<const ModelSpec> spec, std::shared_ptr<const RawOptions> options,
                   const RankInfo& info, PluginLogSink log);
  ~DllModelInstance() override;
  DllModelInstance(const DllModelInstance&) = delete;
  DllModelInstance& operator=(const DllModelInstance&) = delete;

  void call(CallFrame& frame) override;

 private:
  // synk_host_services callbacks; `host` is this.
  static void log(void* host, int32_t level, const char* message) noexcept;
  static void* allocate(void* host, uint64_t bytes) noexcept;
  static void release(void* host, void* pointer) noexcept;
  static synk_status allReduce(void* host, void* buffer, uint64_t count, int32_t dtype,
                               int32_t op) noexcept;
  static synk_status allGather(void* host, const void* send, void* recv, uint64_t count,
                               int32_t dtype) noexcept;
  // A collective service's failure: kept for the runtime (rethrown when the plugin returns),
  // and the code the plugin sees.
  synk_status collectiveFailed(const std::exception& e) noexcept;

  // The variables each function reads and updates, looked up once (not by name per call).
  struct FunctionVariables {
    std::vector<const VariableSpec*> reads;
    std::vector<const VariableSpec*> updates;
  };
  static std::vector<FunctionVariables> resolveVariables(const ModelSpec& spec);

  void checkFrame(const CallFrame& frame, const FunctionSpec& fn) const;
  void releaseLeftovers() noexcept;
  // Formats one line for the log sink; never throws (a failing sink must not fail a call).
  template <typename... Args>
  void logLine(int32_t level, Args&&... args) const noexcept {
    try {
      if (log_) {
        log_(level, str("[synk rank ", info_.rank, " ", levelName(level), "] model '", spec_->name,
                        "': ", std::forward<Args>(args)...));
      }
    } catch (...) {
    }
  }
  std::string prefix() const;  // "model 'intro' (/path/libx.so)"

  std::shared_ptr<const PluginLibrary> library_;  // first member: unloaded last
  std::shared_ptr<const ModelSpec> spec_;
  std::shared_ptr<const RawOptions> options_;  // lent to the plugin until destroy
  std::vector<FunctionVariables> variables_;   // per function
  RankInfo info_;
  PluginLogSink log_;
  // Lent to the plugin from create until destroy returns (the ABI promises that lifetime).
  synk_device_info device_info_{};
  synk_host_services services_{};
  // What the plugin allocated and has not released (the ABI: allocate/release on the calling
  // thread only, so no lock).
  std::unordered_set<void*> allocations_;
  // The first failure of a collective the plugin ran during the current call: rethrown as it is
  // once the plugin returns (a timeout or a dead peer must reach the runtime as what it was).
  std::exception_ptr collective_failure_;
  void* instance_ = nullptr;
  // The raw tensors of the call in progress, kept between calls so a call allocates nothing.
  struct RawCall {
    std::vector<synk_tensor> inputs, reads, updates;
  };
  RawCall raw_;
};

}  // namespace synk::plugin_host
