#pragma once
// Shared by the NCCL stand-in tests: the factory with scripted faults, small collectives through
// the NcclCommunicator, and what the ledger must say once the ranks are gone.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "synk/collectives/cuda/nccl/nccl_communicator.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/shm_segment.h"
#include "tests/support/nccl_standin/standin_backend.h"
#include "tests/support/nccl_standin/standin_faults.h"
#include "tests/support/nccl_standin/standin_nccl.h"
#include "tests/support/nccl_standin/standin_segment.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {

// The stand-in factory, with `faults` scripted for every rank (set before the ranks fork).
inline std::unique_ptr<BackendFactory> standinFactory(const standin::Faults& faults = {}) {
  standin::configure(faults);
  return standin::makeNcclStandinBackendFactory();
}

inline NcclCommunicator& ncclOf(RankContext& ctx) {
  return dynamic_cast<NcclCommunicator&>(ctx.backend.communicator(true));
}

// A window of `bytes` every rank makes together, adopted by the rank's device.
inline void* adoptedWindow(RankContext& ctx, size_t bytes, Waiter& waiter) {
  void* window = ncclOf(ctx).allocateWindow(bytes, waiter);
  if (window == nullptr) throw std::runtime_error("allocateWindow gave nothing");
  ctx.device().adoptWindow(window);
  return window;
}

// One float32 all_reduce (sum) of `count` elements through the NcclCommunicator; checked unless
// `wait` is false (then it may still run when this returns).
inline void sumAndCheck(RankContext& ctx, size_t count, bool wait = true) {
  Device& device = ctx.device();
  std::vector<float> values(count, static_cast<float>(ctx.rank() + 1));
  void* buffer = device.allocate(count * sizeof(float));
  Waiter waiter = ctx.waiter("a stand-in all_reduce");
  device.copy(buffer, values.data(), count * sizeof(float), CopyKind::HostToDevice);
  device.synchronize(waiter);  // `values` is read when the copy runs
  ncclOf(ctx).allReduce({buffer, count, DType::Float32, ReduceOp::Sum}, waiter);
  if (wait) {
    device.copy(values.data(), buffer, count * sizeof(float), CopyKind::DeviceToHost);
    device.synchronize(waiter);
    const float want = static_cast<float>(ctx.size() * (ctx.size() + 1) / 2);
    for (size_t i = 0; i < count; ++i) {
      if (values[i] != want) {
        throw std::runtime_error(
            str("rank ", ctx.rank(), ": element ", i, " is ", values[i], ", expected ", want));
      }
    }
  }
  device.release(buffer);  // stream-ordered: after the all_reduce
}

// Every rank's ledger record, and the violations, for INFO.
inline std::string ledgerReport(int n_ranks) {
  std::string out;
  for (int r = 0; r < n_ranks; ++r) {
    const standin::RankRecord& l = standin::record(r);
    out += str("rank ", r, ": inits ", l.inits.load(), ", splits ", l.splits.load(),
               " (returned while running ", l.split_returned_while_running.load(), "), finalizes ",
               l.finalizes.load(), " (in progress ", l.finalize_in_progress.load(), "), destroys ",
               l.destroys.load(), ", aborts ", l.aborts.load(), ", refused ", l.refused.load(),
               ", jobs/ops stopped by abort ", l.jobs_stopped_by_abort.load(), "/",
               l.ops_stopped_by_abort.load(), ", at exit: threads ", l.live_threads_at_exit.load(),
               ", communicators ", l.live_comms_at_exit.load(), "\n");
  }
  return out + str(standin::ledger().violations.load(), " violation(s)\n", standin::violationLog());
}

// Stand-in ids (segments) of this test process left in /dev/shm.
inline int leftoverIds() {
  return countSegmentsWithPrefix(standin::Segment::namePrefix(getpid()));
}

// Whatever happened: every rank left no stand-in thread or communicator behind, and no shared
// memory is left.
inline void requireNothingLeft(const RankRun& run, int n_ranks, bool killed_rank_ok = false) {
  INFO(run.describe() << ledgerReport(n_ranks));
  CHECK(run.leftover_segments == 0);
  CHECK(leftoverIds() == 0);
  for (int r = 0; r < n_ranks; ++r) {
    if (killed_rank_ok && standin::record(r).live_threads_at_exit.load() == -1) continue;
    CHECK(standin::record(r).live_threads_at_exit.load() == 0);
    CHECK(standin::record(r).live_comms_at_exit.load() == 0);
  }
}

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace synk::test
