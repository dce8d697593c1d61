// The conformance suite (tests/support/conformance_checks.h) against the cuda backend: every
// collective, dtype and op through NCCL (native) and through host staging, on 1 GPU (a 1-rank
// NCCL communicator: init, split, every collective, finalize), on ranks sharing one GPU
// (host-staged; NCCL refused), and on 2 and 4 GPUs.
//
// One check per test case, and one test case per process: the test process is rank 0, so it
// initialises CUDA, after which the fork guard (rightly) refuses to fork again. CTest runs every
// case in its own process; by hand: ./cuda_conformance_test "cuda nccl allReduce on 2 GPUs".
// A case skips (exit 77) unless the machine has at least as many GPUs as it needs.
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <stdexcept>

#include "synk/collectives/cuda/fork_guard.h"
#include "synk/collectives/cuda_factory.h"
#include "synk/core/error.h"
#include "synk/core/shm_heap.h"
#include "tests/support/conformance_checks.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

using Check = std::function<void(BackendFactory&, int, const ConformanceOptions&)>;

std::unique_ptr<BackendFactory> cudaFactory(int n_gpus) {
  if (cudaInitStateOfThisProcess().state == CudaInitState::Initialised) {
    FAIL(
        "an earlier case initialised CUDA in this process, so it cannot fork again: run one "
        "case per process (ctest -L gpu does)");
  }
  auto factory = makeCudaBackendFactory();
  std::string why;
  if (!factory->isViable(&why)) skipTest("the cuda backend is not viable here: " + why);
  if (factory->deviceCount() < n_gpus) {
    skipTest(str("needs ", n_gpus, " GPUs, ", factory->deviceCount(), " visible"));
  }
  return factory;
}

// n_gpus ranks, each on a GPU of its own.
void check(const Check& run, int n_gpus, bool nccl, ConformanceOptions options = {}) {
  const auto factory = cudaFactory(n_gpus);
  options.native = nccl;
  run(*factory, n_gpus, options);
}

// n_ranks ranks, all on GPU 0 (host-staged: NCCL needs one GPU per rank).
void checkShared(const Check& run, int n_ranks, ConformanceOptions options = {}) {
  const auto factory = cudaFactory(1);
  options.native = false;
  options.devices.assign(static_cast<size_t>(n_ranks), 0);
  run(*factory, n_ranks, options);
}

constexpr bool kNccl = true;
constexpr bool kStaged = false;

// A 1-rank NCCL communicator does no transfer, but runs everything around it: the id exchange,
// init and split under the non-blocking parent, every collective's enqueue, finalize.
TEST_CASE("cuda nccl allReduce on 1 GPU", "[gpu]") {
  check(checkAllReduce, 1, kNccl);
}
TEST_CASE("cuda nccl allReduceList on 1 GPU", "[gpu]") {
  check(checkAllReduceList, 1, kNccl);
}
TEST_CASE("cuda nccl reduce on 1 GPU", "[gpu]") {
  check(checkReduce, 1, kNccl);
}
TEST_CASE("cuda nccl broadcast on 1 GPU", "[gpu]") {
  check(checkBroadcast, 1, kNccl);
}
TEST_CASE("cuda nccl gather on 1 GPU", "[gpu]") {
  check(checkGather, 1, kNccl);
}
TEST_CASE("cuda nccl allGather on 1 GPU", "[gpu]") {
  check(checkAllGather, 1, kNccl);
}
TEST_CASE("cuda nccl invalid arguments on 1 GPU", "[gpu]") {
  check(checkInvalidArguments, 1, kNccl);
}
TEST_CASE("cuda nccl back to back on 1 GPU", "[gpu]") {
  check(checkBackToBack, 1, kNccl);
}
TEST_CASE("cuda host-staged back to back on 1 GPU", "[gpu]") {
  check(checkBackToBack, 1, kStaged);
}

TEST_CASE("cuda host-staged allReduce on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkAllReduce, 2);
}
TEST_CASE("cuda host-staged allReduceList on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkAllReduceList, 2);
}
TEST_CASE("cuda host-staged reduce on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkReduce, 2);
}
TEST_CASE("cuda host-staged broadcast on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkBroadcast, 2);
}
TEST_CASE("cuda host-staged gather on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkGather, 2);
}
TEST_CASE("cuda host-staged allGather on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkAllGather, 2);
}
TEST_CASE("cuda host-staged invalid arguments on 2 ranks sharing a GPU", "[gpu]") {
  checkShared(checkInvalidArguments, 2);
}
TEST_CASE("cuda host-staged back to back on 3 ranks sharing a GPU", "[gpu]") {
  checkShared(checkBackToBack, 3);
}

TEST_CASE("cuda nccl on ranks sharing a GPU is refused at once, naming host staging", "[gpu]") {
  const auto factory = cudaFactory(1);
  RankOptions options;
  options.devices = {0, 0};
  runOnRanks(
      *factory, 2,
      [](RankContext& ctx) {
        if (ctx.backend.nativeUnavailable() == nullptr) {
          throw std::runtime_error("the backend claims NCCL on ranks sharing a GPU");
        }
        try {
          ctx.backend.communicator(true);
        } catch (const UsageError& e) {
          const std::string message = e.what();
          for (const char* part :
               {"NCCL needs one GPU per rank", "share cuda:0", ".native = false"}) {
            if (message.find(part) == std::string::npos) {
              throw std::runtime_error(str("the refusal does not say '", part, "': ", message));
            }
          }
          return;
        }
        throw std::runtime_error("communicator(true) did not refuse ranks sharing a GPU");
      },
      options);
}

TEST_CASE("cuda nccl allReduce on 2 GPUs", "[gpu]") {
  check(checkAllReduce, 2, kNccl);
}
TEST_CASE("cuda nccl allReduceList on 2 GPUs", "[gpu]") {
  check(checkAllReduceList, 2, kNccl);
}
TEST_CASE("cuda nccl reduce on 2 GPUs", "[gpu]") {
  check(checkReduce, 2, kNccl);
}
TEST_CASE("cuda nccl broadcast on 2 GPUs", "[gpu]") {
  check(checkBroadcast, 2, kNccl);
}
TEST_CASE("cuda nccl gather on 2 GPUs", "[gpu]") {
  check(checkGather, 2, kNccl);
}
TEST_CASE("cuda nccl allGather on 2 GPUs", "[gpu]") {
  check(checkAllGather, 2, kNccl);
}
TEST_CASE("cuda nccl invalid arguments on 2 GPUs", "[gpu]") {
  check(checkInvalidArguments, 2, kNccl);
}
TEST_CASE("cuda nccl back to back on 2 GPUs", "[gpu]") {
  check(checkBackToBack, 2, kNccl);
}

TEST_CASE("cuda nccl allReduce on 4 GPUs", "[gpu]") {
  check(checkAllReduce, 4, kNccl);
}
TEST_CASE("cuda nccl reduce on 4 GPUs", "[gpu]") {
  check(checkReduce, 4, kNccl);
}
TEST_CASE("cuda nccl broadcast on 4 GPUs", "[gpu]") {
  check(checkBroadcast, 4, kNccl);
}
TEST_CASE("cuda nccl gather on 4 GPUs", "[gpu]") {
  check(checkGather, 4, kNccl);
}
TEST_CASE("cuda nccl allGather on 4 GPUs", "[gpu]") {
  check(checkAllGather, 4, kNccl);
}
TEST_CASE("cuda nccl invalid arguments on 4 GPUs", "[gpu]") {
  check(checkInvalidArguments, 4, kNccl);
}
TEST_CASE("cuda nccl back to back on 4 GPUs", "[gpu]") {
  check(checkBackToBack, 4, kNccl);
}

TEST_CASE("cuda host-staged allReduce on 2 GPUs", "[gpu]") {
  check(checkAllReduce, 2, kStaged);
}
TEST_CASE("cuda host-staged reduce on 2 GPUs", "[gpu]") {
  check(checkReduce, 2, kStaged);
}
TEST_CASE("cuda host-staged broadcast on 2 GPUs", "[gpu]") {
  check(checkBroadcast, 2, kStaged);
}
TEST_CASE("cuda host-staged gather on 2 GPUs", "[gpu]") {
  check(checkGather, 2, kStaged);
}
TEST_CASE("cuda host-staged allGather on 2 GPUs", "[gpu]") {
  check(checkAllGather, 2, kStaged);
}
TEST_CASE("cuda host-staged invalid arguments on 2 GPUs", "[gpu]") {
  check(checkInvalidArguments, 2, kStaged);
}
TEST_CASE("cuda host-staged back to back on 2 GPUs", "[gpu]") {
  check(checkBackToBack, 2, kStaged);
}

TEST_CASE("cuda host-staged allReduce on 4 GPUs", "[gpu]") {
  check(checkAllReduce, 4, kStaged);
}
TEST_CASE("cuda host-staged reduce on 4 GPUs", "[gpu]") {
  check(checkReduce, 4, kStaged);
}
TEST_CASE("cuda host-staged broadcast on 4 GPUs", "[gpu]") {
  check(checkBroadcast, 4, kStaged);
}
TEST_CASE("cuda host-staged gather on 4 GPUs", "[gpu]") {
  check(checkGather, 4, kStaged);
}
TEST_CASE("cuda host-staged allGather on 4 GPUs", "[gpu]") {
  check(checkAllGather, 4, kStaged);
}
TEST_CASE("cuda host-staged invalid arguments on 4 GPUs", "[gpu]") {
  check(checkInvalidArguments, 4, kStaged);
}
TEST_CASE("cuda host-staged back to back on 4 GPUs", "[gpu]") {
  check(checkBackToBack, 4, kStaged);
}

// Past ShmHeap's large-allocation threshold: staging buffers get heap segments of their own,
// created (and pinned by the segment observer) in the middle of the session.
ConformanceOptions large() {
  ConformanceOptions options;
  options.dtypes = {DType::Float32, DType::Float16};
  options.counts = {ShmHeap::kMinSegmentBytes / 2 + 3};
  return options;
}

TEST_CASE("cuda nccl large allGather on 2 GPUs", "[gpu]") {
  check(checkAllGather, 2, kNccl, large());
}
TEST_CASE("cuda host-staged large allReduce on 2 GPUs", "[gpu]") {
  check(checkAllReduce, 2, kStaged, large());
}
TEST_CASE("cuda host-staged large allGather on 2 GPUs", "[gpu]") {
  check(checkAllGather, 2, kStaged, large());
}
// The pipelined host-staged all_reduce (staged_pipeline.h) on three ranks: parts of unequal
// lengths, avg scaled by 1/3, and (ranks sharing one GPU) three streams' copies on one device.
TEST_CASE("cuda host-staged large allReduce on 3 ranks sharing a GPU", "[gpu]") {
  checkShared(checkAllReduce, 3, large());
}

}  // namespace
}  // namespace synk::test
