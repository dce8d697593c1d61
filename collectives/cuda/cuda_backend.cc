// The "cuda" backend: one GPU per rank (CudaDevice), NCCL (native) and host-staged shared-memory
// collectives, and the factory that counts GPUs and guards fork without touching CUDA.
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "synk/collectives/cuda/device/cuda_device.h"
#include "synk/collectives/cuda/fork_guard.h"
#include "synk/collectives/cuda/gpu_enumeration.h"
#include "synk/collectives/cuda/nccl/nccl_communicator.h"
#include "synk/collectives/cuda/staging/host_staged_communicator.h"
#include "synk/collectives/cuda_factory.h"
#include "synk/core/error.h"
#include "synk/core/host_link.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"

namespace synk {
namespace {

// Why NCCL cannot run on this session: empty when every rank has a GPU of its own. NCCL refuses
// two ranks of one communicator on one GPU, so ranks sharing one run host-staged collectives.
// Over several nodes each node numbers its own GPUs: only ranks of one node (`ranks_per_node`
// consecutive ranks) can share one, and fork() refuses that there (host staging does not cross
// nodes).
std::string sharedDeviceReason(const std::vector<int>& devices, int ranks_per_node) {
  for (size_t r = 0; r < devices.size(); ++r) {
    for (size_t q = 0; q < r; ++q) {
      if (devices[q] != devices[r] || q / ranks_per_node != r / ranks_per_node) continue;
      std::string list;
      for (int d : devices)
        list += str(list.empty() ? "" : ", ", d);
      return str("NCCL needs one GPU per rank, but ranks ", q, " and ", r,
                 " share cuda:", devices[r], " (devices {", list,
                 "}): use host-staged collectives, CollectiveOptions{.native = false} (the default "
                 "when ranks share a GPU)");
    }
  }
  return {};
}

// Host staging reduces through shared memory, which reaches one node only; over several nodes
// every collective is NCCL's (cluster/README.md, "Next": the staged paths through the leaders).
std::string stagedAcrossNodesReason(const ProcessGroup& group) {
  return str(
      "host-staged collectives (CollectiveOptions{.native = false}) do not cross nodes yet "
      "(cluster/README.md, \"Next\"): this session spans ",
      group.span().nodes, " nodes; use the native (NCCL) collectives, the default");
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(RankEnvironment& env) : group_(env.group), heap_(env.heap) {
    if (env.device_ordinal < 0) {
      throw InvalidArgument(str("rank ", group_.rank(),
                                ": the cuda backend needs a GPU ordinal, got ",
                                env.device_ordinal));
    }
    const bool across_nodes = group_.spansNodes();
    no_native_ = sharedDeviceReason(env.devices,
                                    across_nodes ? group_.span().ranks_per_node : group_.size());
    device_ = std::make_unique<CudaDevice>(env.device_ordinal, group_.rank());
    try {
      // Pin every heap segment, present and future: host staging and host-device outputs copy
      // from and to them. Reset in the destructor: the heap outlives this backend.
      CudaDevice* device = device_.get();
      heap_.setSegmentObserver(
          [device](void* base, size_t bytes) { device->registerHostMemory(base, bytes); });
      if (no_native_.empty()) {
        Waiter waiter = group_.startupWaiter("creating the NCCL communicator");
        nccl_ = std::make_unique<NcclCommunicator>(group_, *device_, waiter);
      }
      if (!across_nodes)
        staged_ = std::make_unique<HostStagedCommunicator>(group_, heap_, *device_);
    } catch (...) {
      heap_.setSegmentObserver(nullptr);
      if (group_.aborted()) device_->markAborted();  // a peer died: wait on nothing more
      throw;
    }
  }

  ~CudaBackend() override {
    // Going down after a failure (session aborted, or unwinding from an exception): abort, so
    // nothing below waits on peers or on a GPU that may never finish.
    if (group_.aborted() || std::uncaught_exceptions() > 0) abort();
    // At process exit after cudart's own atexit teardown (a session closed by an atexit handler
    // registered before CUDA was initialised): no CUDA or NCCL call can work any more.
    if (device_ && !device_->aborted() && !device_->runtimeAlive()) {
      if (nccl_) nccl_->abandon();
      device_->markAborted();
    }
    heap_.setSegmentObserver(nullptr);
    staged_.reset();
    nccl_.reset();  // ncclCommFinalize + ncclCommDestroy (or nothing after abort)
    device_.reset();
  }

  Device& device() override { return *device_; }

  Communicator& communicator(bool native) override {
    if (!native) {
      if (!staged_) throw UsageError(stagedAcrossNodesReason(group_));
      return *staged_;
    }
    if (!nccl_) throw UsageError(no_native_);
    return *nccl_;
  }

  const char* nativeUnavailable() const noexcept override {
    return no_native_.empty() ? nullptr : no_native_.c_str();
  }

  void abort() noexcept override {
    if (nccl_) nccl_->abort();  // bounded; every surviving rank does the same
    if (device_) device_->markAborted();
  }

 private:
  ProcessGroup& group_;
  ShmHeap& heap_;
  std::unique_ptr<CudaDevice> device_;
  std::unique_ptr<NcclCommunicator> nccl_;
  std::unique_ptr<HostStagedCommunicator> staged_;
  std::string no_native_;  // why there is no NCCL communicator; empty when there is one
};

class CudaBackendFactory final : public BackendFactory {
 public:
  std::string name() const override { return "cuda"; }

  bool isViable(std::string* why) const override {
    const GpuEnumeration gpus = enumeration();
    if (gpus.count == 0) {
      if (why) *why = gpus.why.empty() ? "no usable NVIDIA GPU" : gpus.why;
      return false;
    }
    // The probe child counted with libcuda itself; otherwise check that it loads (in a child,
    // so this process never maps the driver).
    if (gpus.method != "probe child") {
      const DriverProbe& probe = driverProbe();
      if (!probe.loadable) {
        if (why) {
          *why = str(gpus.count,
                     " GPU(s) listed in /proc/driver/nvidia/gpus, but the CUDA driver "
                     "library libcuda.so.1 cannot be loaded: ",
                     probe.error.empty() ? "unknown reason" : probe.error);
        }
        return false;
      }
    }
    return true;
  }

  int deviceCount() const override { return enumeration().count; }
  bool bindsDevices() const override { return true; }

  void checkBeforeFork() const override { checkCudaNotInitialisedBeforeFork(); }

  // libsynk_cuda_backend.so has its own copy of synk's core: its logs and phases (the device's
  // waits) must reach the program's.
  void linkHost(const SynkHostLink& link) override { useHostLink(link); }

  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    return std::make_unique<CudaBackend>(env);
  }

 private:
  // Whether libcuda loads does not change while the process runs: probe once.
  const DriverProbe& driverProbe() const {
    std::call_once(probed_,
                   [this] { probe_ = probeCudaDriverInChild(false, kDriverProbeDeadline); });
    return probe_;
  }

  // enumerateCudaDevices may fork a probe that runs cuInit (seconds on a large machine): keep
  // its answer while CUDA_VISIBLE_DEVICES stays the same.
  GpuEnumeration enumeration() const {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::optional<std::string> key = cvd ? std::optional<std::string>(cvd) : std::nullopt;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enumerated_ || enumerated_for_ != key) {
      enumerated_ = enumerateCudaDevices();
      enumerated_for_ = key;
    }
    return *enumerated_;
  }

  mutable std::once_flag probed_;
  mutable DriverProbe probe_;
  mutable std::mutex mutex_;
  mutable std::optional<GpuEnumeration> enumerated_;
  mutable std::optional<std::string> enumerated_for_;
};

}  // namespace

std::unique_ptr<BackendFactory> makeCudaBackendFactory() {
  return std::make_unique<CudaBackendFactory>();
}

}  // namespace synk
