// RankBackend (rank_backend.h): a rank's heap and backend, and the tables filled from them.
#include "synk/core/session/rank_backend.h"

#include "synk/core/memory/data_store.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process_group.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/step/collective_exec.h"

namespace synk::detail {

void RankBackend::start(const ForkOptions& options, BackendFactory& factory, ProcessGroup& group) {
  const int rank = group.rank();
  heap_ = std::make_unique<ShmHeap>(group.shmPrefix(), rank);
  const int ordinal = options.devices.empty() ? -1 : options.devices[rank];
  RankEnvironment env{group, *heap_, ordinal, options.devices};
  backend_ = createBackend(factory, env);  // linked: a module's logs and phases reach this process
  tables_.data.open(group.shmPrefix(), &backend_->device());
  tables_.rank = RankResources{rank,
                               options.n_parallel,
                               options.master_rank,
                               &group,
                               &backend_->device(),
                               heap_.get(),
                               &tables_.data.blobs(),
                               backend_.get(),
                               &backend_->communicator(backend_->nativeUnavailable() == nullptr)};
  Waiter waiter = group.startupWaiter("startup");
  group.barrier().arrive(waiter, BarrierSite::Startup);
}

void RankBackend::release() noexcept {
  reportPhases();
  // Device memory goes back to the device before the device itself goes away.
  tables_.collective_handler.release();
  tables_.models.clear();
  tables_.data.close();
  tables_.rank = RankResources{};
  backend_.reset();
  heap_.reset();
}

void RankBackend::startAbort() noexcept {
  if (!backend_) return;
  try {
    abort_ = std::thread([backend = backend_.get()] { backend->abort(); });
  } catch (...) {
    backend_->abort();  // no thread to be had: abort here
  }
}

void RankBackend::joinAbort() noexcept {
  if (abort_.joinable()) abort_.join();  // bounded: the backend's own limits
}

void RankBackend::abandon() noexcept {
  // A thread of the master's does not exist in this copy: forget its handle.
  if (abort_.joinable()) abort_.detach();
  if (abandoned_) return;
  abandoned_ = true;
  // Freeing these would call into the device (a CUDA context does not survive fork) or plugin
  // code on the master's behalf: the copy leaks them, its memory is its own to lose.
  tables_.collective_handler.abandon();
  tables_.models.abandon();
  tables_.data.abandon();
  (void)backend_.release();
  (void)heap_.release();
}

}  // namespace synk::detail
