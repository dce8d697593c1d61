#include "synk/collectives/cpu/cpu_backend.h"

#include <algorithm>
#include <thread>

#include "synk/collectives/cpu/host_device.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {
namespace {

// Several ranks on each of several nodes: shared memory inside a node, then the nodes' leaders,
// is not built yet (cluster/README.md, "Next"); every rank refuses alike, before communicating.
class RefusingCommunicator final : public Communicator {
 public:
  RefusingCommunicator(int rank, int size, int ranks_per_node)
      : Communicator(rank, size), ranks_per_node_(ranks_per_node) {}
  const char* name() const override { return "none across nodes"; }

 protected:
  void doAllReduce(const AllReduceArgs&, Waiter&) override { refuse("all_reduce"); }
  void doReduce(const ReduceArgs&, Waiter&) override { refuse("reduce"); }
  void doBroadcast(const BroadcastArgs&, Waiter&) override { refuse("broadcast"); }
  void doGather(const GatherArgs&, const std::vector<size_t>&, Waiter&) override {
    refuse("gather");
  }
  void doAllGather(const AllGatherArgs&, const std::vector<size_t>&, Waiter&) override {
    refuse("all_gather");
  }

 private:
  [[noreturn]] void refuse(const char* what) const {
    throw UsageError(str(what, " across nodes with ", ranks_per_node_,
                         " cpu ranks per node is not built yet (cluster/README.md, \"Next\"): "
                         "one rank per node works"));
  }
  int ranks_per_node_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(RankEnvironment& env) : device_(env.heap), shm_(env.group, env.heap) {
    ProcessGroup& group = env.group;
    if (!group.spansNodes()) return;
    // Across nodes shared memory reaches only this node: one rank per node talks through the
    // link to the other nodes' (cluster/), more are refused.
    if (group.span().ranks_per_node == 1 && group.link() != nullptr) {
      across_ = group.link()->hostCommunicator();
    } else {
      across_ = std::make_unique<RefusingCommunicator>(group.rank(), group.size(),
                                                       group.span().ranks_per_node);
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
  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    return std::make_unique<CpuBackend>(env);
  }
};

}  // namespace

std::unique_ptr<BackendFactory> makeCpuBackendFactory() {
  return std::make_unique<CpuBackendFactory>();
}

}  // namespace synk
