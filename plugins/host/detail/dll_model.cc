#include "synk/plugins/host/detail/dll_model.h"

#include <utility>

#include "synk/core/error.h"

namespace synk::plugin_host {

// The ABI's device codes are core's DeviceKind values: mapping is a cast.
static_assert(SYNK_DEVICE_HOST == static_cast<int>(DeviceKind::Host) &&
              SYNK_DEVICE_CUDA == static_cast<int>(DeviceKind::Cuda));

const char* levelName(int32_t level) {
  switch (level) {
    case SYNK_LOG_DEBUG:
      return "debug";
    case SYNK_LOG_INFO:
      return "info";
    case SYNK_LOG_WARNING:
      return "warning";
    default:
      return "error";
  }
}

DllModel::DllModel(std::shared_ptr<const PluginLibrary> library, ModelSpec spec,
                   std::shared_ptr<const RawOptions> options, PluginLogSink log)
    : library_(std::move(library)),
      spec_(std::make_shared<const ModelSpec>(std::move(spec))),
      options_(std::move(options)),
      log_(std::move(log)) {}

std::unique_ptr<ModelInstance> DllModel::instantiate(const RankInfo& info) {
  return std::make_unique<DllModelInstance>(library_, spec_, options_, info, log_);
}

DllModelInstance::DllModelInstance(std::shared_ptr<const PluginLibrary> library,
                                   std::shared_ptr<const ModelSpec> spec,
                                   std::shared_ptr<const RawOptions> options, const RankInfo& info,
                                   PluginLogSink log)
    : library_(std::move(library)),
      spec_(std::move(spec)),
      options_(std::move(options)),
      variables_(resolveVariables(*spec_)),
      info_(info),
      log_(std::move(log)) {
  if (!info_.device) throw InvalidArgument(str(prefix(), ": instantiate needs RankInfo::device"));
  Device& device = *info_.device;
  const DeviceHandles handles = device.handles();
  device_info_.struct_size = sizeof device_info_;
  device_info_.kind = static_cast<int32_t>(device.kind());
  device_info_.ordinal = device.ordinal();
  device_info_.rank = info_.rank;
  device_info_.n_ranks = info_.n_ranks;
  device_info_.stream = handles.stream;
  device_info_.blas = handles.blas;
  device_info_.comm = handles.comm;
  services_.struct_size = sizeof services_;
  services_.host = this;
  services_.log = &DllModelInstance::log;
  services_.allocate = &DllModelInstance::allocate;
  services_.release = &DllModelInstance::release;
  services_.n_options = options_->count();
  services_.options = options_->data();
  services_.all_reduce = &DllModelInstance::allReduce;
  services_.all_gather = &DllModelInstance::allGather;

  char error[4096] = {};
  void* instance = nullptr;
  const synk_status status =
      library_->table().create(&device_info_, &services_, &instance, error, sizeof error);
  error[sizeof error - 1] = '\0';
  if (status != SYNK_OK || !instance) {
    releaseLeftovers();  // the destructor will not run
    throw PluginError(str(prefix(), ": create failed on rank ", info_.rank, " of ", info_.n_ranks,
                          " (", device.describe(), ") with ", statusName(status), ": ",
                          status == SYNK_OK ? "it returned SYNK_OK but no instance"
                          : *error          ? error
                                            : "(no message)"));
  }
  instance_ = instance;
}

DllModelInstance::~DllModelInstance() {
  if (info_.device->aborted()) {
    // The plugin's teardown (cudaFree, a stream sync) could wait forever on a GPU whose work
    // will never finish: leave the instance to the process exit, and its library loaded (an
    // unload would run the plugin's static destructors, which may wait on the GPU too, and
    // unmap code its threads may still run).
    logLine(SYNK_LOG_WARNING, "not destroyed: the session was aborted");
    new std::shared_ptr<const PluginLibrary>(library_);  // deliberately leaked
    return;
  }
  library_->table().destroy(instance_);
  releaseLeftovers();
}

std::string DllModelInstance::prefix() const {
  return str("model '", spec_->name, "' (", library_->path(), ")");
}

void DllModelInstance::releaseLeftovers() noexcept {
  if (allocations_.empty()) return;
  logLine(SYNK_LOG_WARNING, allocations_.size(),
          " device allocation(s) not released by the plugin; the host releases them");
  for (void* pointer : allocations_)
    info_.device->release(pointer);
  allocations_.clear();
}

void DllModelInstance::log(void* host, int32_t level, const char* message) noexcept {
  static_cast<const DllModelInstance*>(host)->logLine(level, message ? message : "");
}

void* DllModelInstance::allocate(void* host, uint64_t bytes) noexcept {
  auto* self = static_cast<DllModelInstance*>(host);
  void* pointer = nullptr;
  try {
    pointer = self->info_.device->allocate(bytes);
    self->allocations_.insert(pointer);
    return pointer;
  } catch (const std::exception& e) {
    if (pointer) self->info_.device->release(pointer);
    // The plugin only sees NULL: the reason goes to the log.
    self->logLine(SYNK_LOG_WARNING, "allocate(", bytes, " bytes) failed: ", e.what());
    return nullptr;
  }
}

void DllModelInstance::release(void* host, void* pointer) noexcept {
  auto* self = static_cast<DllModelInstance*>(host);
  if (!pointer) return;
  {
    if (self->allocations_.erase(pointer) == 0) {
      self->logLine(SYNK_LOG_ERROR, "release() of a pointer allocate() did not return; ignored");
      return;
    }
  }
  self->info_.device->release(pointer);
}

synk_status DllModelInstance::allReduce(void* host, void* buffer, uint64_t count, int32_t dtype,
                                        int32_t op) noexcept {
  auto* self = static_cast<DllModelInstance*>(host);
  try {
    if (!self->info_.collectives) {
      throw UsageError("this model instance has no collectives (not part of a session)");
    }
    if (!isValidDType(dtype)) throw InvalidArgument(str("all_reduce: unknown dtype code ", dtype));
    ReduceOp reduce_op;
    switch (op) {
      case SYNK_REDUCE_SUM:
        reduce_op = ReduceOp::Sum;
        break;
      case SYNK_REDUCE_AVG:
        reduce_op = ReduceOp::Avg;
        break;
      case SYNK_REDUCE_MAX:
        reduce_op = ReduceOp::Max;
        break;
      case SYNK_REDUCE_MIN:
        reduce_op = ReduceOp::Min;
        break;
      default:
        throw InvalidArgument(str("all_reduce: unknown op code ", op));
    }
    self->info_.collectives->allReduce(buffer, count, static_cast<DType>(dtype), reduce_op);
    return SYNK_OK;
  } catch (const std::exception& e) {
    return self->collectiveFailed(e);
  }
}

synk_status DllModelInstance::allGather(void* host, const void* send, void* recv, uint64_t count,
                                        int32_t dtype) noexcept {
  auto* self = static_cast<DllModelInstance*>(host);
  try {
    if (!self->info_.collectives) {
      throw UsageError("this model instance has no collectives (not part of a session)");
    }
    if (!isValidDType(dtype)) throw InvalidArgument(str("all_gather: unknown dtype code ", dtype));
    if (count > 0 && (send == nullptr || recv == nullptr)) {
      throw InvalidArgument("all_gather: a null send or receive buffer");
    }
    self->info_.collectives->allGather(send, recv, count, static_cast<DType>(dtype));
    return SYNK_OK;
  } catch (const std::exception& e) {
    return self->collectiveFailed(e);
  }
}

synk_status DllModelInstance::collectiveFailed(const std::exception& e) noexcept {
  // The plugin sees a code; the runtime gets the exception itself when the plugin returns.
  if (!collective_failure_) collective_failure_ = std::current_exception();
  return dynamic_cast<const InvalidArgument*>(&e) ? SYNK_ERROR_INVALID_ARGUMENT
                                                  : SYNK_ERROR_DEVICE;
}

}  // namespace synk::plugin_host
