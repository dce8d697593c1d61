#include "tests/support/nccl_standin/standin_backend.h"

#include <exception>

#include "synk/collectives/cuda/nccl/nccl_communicator.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"
#include "tests/support/nccl_standin/standin_comm.h"
#include "tests/support/nccl_standin/standin_device.h"
#include "tests/support/nccl_standin/standin_nccl.h"
#include "tests/support/nccl_standin/standin_segment.h"

namespace synk::standin {
namespace {

// Destroyed last (declared first), also when the backend's constructor throws: by then every
// stand-in object of the rank is gone, so what is still alive leaked.
class ExitRecord {
 public:
  explicit ExitRecord(int rank) : rank_(rank) {}
  ~ExitRecord() {
    Segment::removeCreatedIds();
    record(rank_).live_threads_at_exit.store(liveThreads());
    record(rank_).live_comms_at_exit.store(liveComms());
  }
  ExitRecord(const ExitRecord&) = delete;
  ExitRecord& operator=(const ExitRecord&) = delete;

 private:
  int rank_;
};

class StandinBackend final : public Backend {
 public:
  explicit StandinBackend(RankEnvironment& env) : group_(env.group), exit_(env.group.rank()) {
    device_ = std::make_unique<StandinDevice>(env.device_ordinal, group_.rank(), standinNccl());
    try {
      Waiter waiter = group_.startupWaiter("creating the NCCL communicator");
      nccl_ = std::make_unique<NcclCommunicator>(group_, *device_, waiter, standinNccl());
    } catch (...) {
      if (group_.aborted()) device_->markAborted();  // a peer died: wait on nothing more
      throw;
    }
  }

  ~StandinBackend() override {
    // As CudaBackend: after a failure abort, so nothing below waits on peers.
    if (group_.aborted() || std::uncaught_exceptions() > 0) abort();
    nccl_.reset();  // finalize + destroy (or nothing after abort)
    device_.reset();
  }

  Device& device() override { return *device_; }

  Communicator& communicator(bool native) override {
    if (!native) throw UsageError("the nccl-standin backend has no host-staged communicator");
    return *nccl_;
  }

  void abort() noexcept override {
    if (nccl_) nccl_->abort();
    if (device_) device_->markAborted();
  }

 private:
  ProcessGroup& group_;
  ExitRecord exit_;
  std::unique_ptr<StandinDevice> device_;
  std::unique_ptr<NcclCommunicator> nccl_;
};

class StandinBackendFactory final : public BackendFactory {
 public:
  std::string name() const override { return "nccl-standin"; }
  bool isViable(std::string*) const override { return true; }
  int deviceCount() const override { return kMaxRanks; }
  bool bindsDevices() const override { return true; }
  // The ledger must exist before fork, so that every rank shares it.
  void checkBeforeFork() const override { (void)ledger(); }
  void linkHost(const SynkHostLink&) override {}  // linked into the test: one copy of synk
  std::unique_ptr<Backend> create(RankEnvironment& env) override {
    return std::make_unique<StandinBackend>(env);
  }
};

}  // namespace

std::unique_ptr<BackendFactory> makeNcclStandinBackendFactory() {
  return std::make_unique<StandinBackendFactory>();
}

}  // namespace synk::standin
