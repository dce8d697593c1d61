#include "synk/collectives/cpu/cpu_backend.h"

#include <algorithm>
#include <thread>

#include "synk/collectives/cpu/host_device.h"
#include "synk/collectives/shm/node_communicator.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(RankEnvironment& env) : device_(env.heap), shm_(env.group, env.heap) {
    ProcessGroup& group = env.group;
    if (!group.spansNodes()) return;
    // Across nodes shared memory reaches only this node: one rank per node talks through the
    // link to the other nodes' (cluster/: the leaders' collectives are the session's); several
    // go through shared memory to their node's leader, the process that holds the link.
    std::unique_ptr<Communicator> leaders =
        group.link() != nullptr ? group.link()->hostCommunicator() : nullptr;
    if (group.span().ranks_per_node == 1) {
      SYNK_CHECK(leaders != nullptr, "rank ", group.rank(), " alone on its node has no link");
      across_ = std::move(leaders);
    } else {
      across_ = std::make_unique<NodeCommunicator>(group, env.heap, std::move(leaders));
    }
  }

  Device& device() override { return device_; }
  // Shared memory is the host's native transport, so both choices are the same communicator.
  Communicator& communicator(bool) override { return across_ ? *across_ : shm_; }

 private:
  HostDevice device_;
  ShmCommunicator shm_;
  std::unique_ptr<Communicator> across_;  // several nodes
};

class CpuBackendFactory final : public BackendFactory {
 public:
  std::string name() const override { return "cpu"; }
  bool isViable(std::string*) const override { return true; }
  int deviceCount() const override {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  bool bindsDevices() const override { return false; }
  void linkHost(const SynkHostLink&) override {}  // built into the program: one copy of synk
  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    return std::make_unique<CpuBackend>(env);
  }
};

}  // namespace

std::unique_ptr<BackendFactory> makeCpuBackendFactory() {
  return std::make_unique<CpuBackendFactory>();
}

}  // namespace synk
