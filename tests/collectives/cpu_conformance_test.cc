// The conformance suite (tests/support/conformance_checks.h) against the cpu backend, plus the
// cases only the shared-memory communicator has: buffers outside the heap, and buffers large
// enough for a segment of their own.
#include <catch2/catch.hpp>

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/collectives/shm/shm_communicator.h"
#include "synk/core/shm_heap.h"
#include "tests/support/conformance_checks.h"

namespace synk::test {
namespace {

TEST_CASE("cpu allReduce", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkAllReduce(*factory, n);
}

TEST_CASE("cpu allReduceList", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  ConformanceOptions options;
  // Longer than one round of the shared-memory list collective.
  options.list_length = ShmCommunicator::maxListRound() + 7;
  checkAllReduceList(*factory, n, options);
}

TEST_CASE("cpu reduce", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkReduce(*factory, n);
}

TEST_CASE("cpu broadcast", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkBroadcast(*factory, n);
}

TEST_CASE("cpu gather", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkGather(*factory, n);
}

TEST_CASE("cpu allGather", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkAllGather(*factory, n);
}

TEST_CASE("cpu invalid arguments", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkInvalidArguments(*factory, n);
}

TEST_CASE("cpu collectives back to back", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3, 4);
  checkBackToBack(*factory, n);
}

TEST_CASE("shm communicator stages buffers outside the heap", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(1, 2, 3);
  ConformanceOptions options;
  options.outside_heap = true;
  options.dtypes = {DType::Float32, DType::Int64, DType::UInt8, DType::BFloat16};
  options.counts = {0, 1, 5, 1000, 70001};
  checkAllCollectives(*factory, n, options);
}

TEST_CASE("shm communicator on buffers with segments of their own", "[coll]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(2, 3);
  ConformanceOptions options;
  options.dtypes = {DType::Float32};
  // Past ShmHeap's large-allocation threshold (a quarter of a segment), with an odd tail.
  options.counts = {ShmHeap::kMinSegmentBytes / 8 + 3};
  checkAllReduce(*factory, n, options);
  checkAllGather(*factory, n, options);
}

}  // namespace
}  // namespace synk::test
