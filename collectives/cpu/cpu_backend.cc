#include "synk/collectives/cpu/cpu_backend.h"

#include <algorithm>
#include <thread>

#include "synk/collectives/cpu/host_device.h"
#include "synk/collectives/shm/shm_communicator.h"

namespace synk {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(RankEnvironment& env)
      : device_(env.heap), communicator_(env.group, env.heap) {}

  Device& device() override { return device_; }
  // Shared memory is the host's native transport, so both choices are the same communicator.
  Communicator& communicator(bool) override { return communicator_; }

 private:
  HostDevice device_;
  ShmCommunicator communicator_;
};

class CpuBackendFactory final : public BackendFactory {
 public:
  std::string name() const override { return "cpu"; }
  bool isViable(std::string*) const override { return true; }
  int deviceCount() const override {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  bool bindsDevices() const override { return false; }
  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    return std::make_unique<CpuBackend>(env);
  }
};

}  // namespace

std::unique_ptr<BackendFactory> makeCpuBackendFactory() {
  return std::make_unique<CpuBackendFactory>();
}

}  // namespace synk
