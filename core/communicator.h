#pragma once
// Collective operations among the ranks of a session, on device memory.
//
// Every rank calls the same operation with matching arguments (counts, dtype, op, root). The
// runtime checks that before calling (core/exchange.h compares each rank's fingerprint through the
// control block), so implementations may assume it; they must still never hang forever: every
// wait polls the Waiter passed in (deadline, abort flag, peer liveness).
//
// Buffers are device memory of the rank's Device (core/device.h). Completion: an operation has
// completed when it returns, or it is ordered on the device's stream (NCCL), so a later
// Device::copy or synchronize observes its result. Busbw factors and algorithms are documented
// in collectives/README.md.
#include <cstddef>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/reduce_op.h"

namespace synk {

class Waiter;

struct AllReduceArgs {
  void* buffer = nullptr;  // in place
  size_t count = 0;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;  // avg = sum, then scaled by 1/n
};

struct ReduceArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // significant at root only; may equal send there
  size_t count = 0;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;
};

struct BroadcastArgs {
  void* buffer = nullptr;  // root's is sent, every other rank's is overwritten
  size_t count = 0;
  DType dtype = DType::Float32;
  int root = 0;
};

// Variable-length gathers: rank r contributes counts[r] elements (counts is identical on every
// rank); the result is the concatenation in rank order, sum(counts) elements.
struct GatherArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // significant at root only
  std::vector<size_t> counts;
  DType dtype = DType::Float32;
  int root = 0;
};

struct AllGatherArgs {
  const void* send = nullptr;
  void* recv = nullptr;  // must not overlap send
  std::vector<size_t> counts;
  DType dtype = DType::Float32;
};

// Argument checks every communicator applies alike (`what` names the backend and operation,
// "nccl gather"): InvalidArgument on every rank before anything moves.
void checkRoot(int root, int n_ranks, std::string_view what);
// Fills `offsets` (reused by the caller across calls) with each rank's element offset in a
// gather result, plus the total as the last entry; `counts` must hold one count per rank.
void partOffsets(const std::vector<size_t>& counts, int n_ranks, std::string_view what,
                 std::vector<size_t>& offsets);

class Communicator {
 public:
  virtual ~Communicator() = default;
  // "shm", "nccl", "host-staged"
  virtual const char* name() const = 0;

  virtual void allReduce(const AllReduceArgs& args, Waiter& waiter) = 0;
  virtual void reduce(const ReduceArgs& args, Waiter& waiter) = 0;
  virtual void broadcast(const BroadcastArgs& args, Waiter& waiter) = 0;
  virtual void gather(const GatherArgs& args, Waiter& waiter) = 0;
  virtual void allGather(const AllGatherArgs& args, Waiter& waiter) = 0;
};

}  // namespace synk
