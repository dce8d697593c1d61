// The conformance suite (tests/support/conformance_checks.h) against the cuda backend: every
// collective, dtype and op on 2 and 4 GPUs, through NCCL (native) and through host staging.
//
// One check per test case, and one test case per process: the test process is rank 0, so it
// initialises CUDA, after which the fork guard (rightly) refuses to fork again. CTest runs every
// case in its own process; by hand: ./cuda_conformance_test "cuda nccl allReduce on 2 GPUs".
// A case skips (exit 77) unless the machine has at least as many GPUs as it needs.
#include <catch2/catch.hpp>
#include <functional>

#include "collectives/cuda/fork_guard.h"
#include "collectives/cuda_factory.h"
#include "core/shm_heap.h"
#include "tests/support/conformance_checks.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

using Check = std::function<void(BackendFactory&, int, const ConformanceOptions&)>;

void check(const Check& run, int n_gpus, bool nccl, ConformanceOptions options = {}) {
  if (cudaInitStateOfThisProcess().state == CudaInitState::Initialised) {
    FAIL(
        "an earlier case initialised CUDA in this process, so it cannot fork again: run one "
        "case per process (ctest -L gpu does)");
  }
  const auto factory = makeCudaBackendFactory();
  std::string why;
  if (!factory->isViable(&why)) skipTest("the cuda backend is not viable here: " + why);
  if (factory->deviceCount() < n_gpus) {
    skipTest(str("needs ", n_gpus, " GPUs, ", factory->deviceCount(), " visible"));
  }
  options.native = nccl;
  run(*factory, n_gpus, options);
}

constexpr bool kNccl = true;
constexpr bool kStaged = false;

TEST_CASE("cuda nccl allReduce on 2 GPUs", "[gpu]") {
  check(checkAllReduce, 2, kNccl);
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

}  // namespace
}  // namespace synk::test
