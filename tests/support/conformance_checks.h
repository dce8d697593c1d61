#pragma once
// Backend-agnostic conformance checks of the Communicator contract (core/communicator.h), in the
// manner of tensorpipe's TransportTest: every collective x dtype x op x count x root, with data
// generated per rank so every result is checked exactly (small integers, which every dtype and
// every summation order represent exactly; avg within the dtype's rounding).
//
// Buffers are Device memory, filled and read back through Device::copy and synchronize(), so
// the same checks run against any backend: pass its factory. Each check runs on n_ranks forked
// ranks (tests/support/rank_fixture.h) and fails with the first mismatch of every failing rank.
#include <cstddef>
#include <vector>

#include "synk/core/backend.h"
#include "synk/core/dtype.h"

namespace synk::test {

struct ConformanceOptions {
  // Backend::communicator(native): cuda has NCCL (true) and host staging (false).
  bool native = true;
  // Buffers from the C++ heap instead of Device::allocate: exercises the shared-memory
  // communicator's staging of buffers it cannot map (host backends only).
  bool outside_heap = false;
  std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Int32,   DType::Int64,
                               DType::UInt8,   DType::Float16, DType::BFloat16};
  // Element counts (gathers use per-rank counts derived from these, some of them 0).
  std::vector<size_t> counts = {0, 1, 3, 17, 64, 1000, 4099, 70001};
  // Buffers of 4 floats in one allReduceList (the shared-memory communicator runs more than
  // ShmCommunicator::maxListRound() in rounds).
  size_t list_length = 300;
  // Device of each rank (RankOptions::devices): {0, 0} runs two ranks on one GPU.
  std::vector<int> devices{};
};

void checkAllReduce(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});
// allReduceList: every dtype, op and count in one list; many small buffers; a list of one
// buffer, of one empty buffer, and an empty list.
void checkAllReduceList(BackendFactory& factory, int n_ranks,
                        const ConformanceOptions& options = {});
// Every root; send and recv at the root separate or identical (alternating over the counts).
void checkReduce(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});
void checkBroadcast(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});
// Uneven counts per rank, including ranks that send nothing and an all-empty gather.
void checkGather(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});
void checkAllGather(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});
// gather/none ops, avg of integers, a root out of range and a counts list of the wrong length
// throw InvalidArgument on every rank, and the communicator still works afterwards.
void checkInvalidArguments(BackendFactory& factory, int n_ranks,
                           const ConformanceOptions& options = {});
// Many different collectives back to back (catches state that leaks from one call to the next).
void checkBackToBack(BackendFactory& factory, int n_ranks, const ConformanceOptions& options = {});

// All of the above.
void checkAllCollectives(BackendFactory& factory, int n_ranks,
                         const ConformanceOptions& options = {});

}  // namespace synk::test
