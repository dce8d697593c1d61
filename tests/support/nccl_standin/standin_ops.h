#pragma once
// NCCL operations as they run on the stand-in stream: the "kernels". Like NCCL's, each one waits
// for its peers inside the operation — a peer that never arrives leaves it pending until the
// communicator is aborted (or the stream stops) — and a rank's operation ends when its own part is
// done, while slower peers may still be reading its data (which is why a teardown barrier is
// needed: Comm::checkTeardown reports a teardown that does not wait).
//
// Collectives move data through the ranks' slots of the communicator's context, kSlotBytes per
// step: every rank waits until all peers finished reading the previous step, writes its slot,
// announces the step, waits for every peer's announcement (and checks that every rank called the
// same collective), reads, and announces that it is done reading. Reductions combine the ranks'
// contributions in rank order with core/host_kernels.h. send/recv move data through a mailbox per
// ordered pair, kMailBytes per chunk; the send/recv of one group progress together, as NCCL's
// grouped point-to-point operations do.
#include <nccl.h>

#include <memory>
#include <vector>

#include "synk/core/dtype.h"
#include "tests/support/nccl_standin/standin_comm.h"
#include "tests/support/nccl_standin/standin_stream.h"

namespace synk::standin {

enum class OpKind : uint32_t { AllReduce = 1, Reduce, Broadcast, AllGather, Send, Recv };

struct Op {
  OpKind kind;
  std::shared_ptr<Comm> comm;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // allGather: each rank's part
  DType dtype = DType::Float32;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t redop = ncclSum;
  int peer = 0;  // the root of a rooted collective, the peer of send/recv
  // Where NCCL 2.28 would take a symmetric kernel (an all-reduce or all-gather whose send and
  // receive buffers both lie in windows of its communicator): the receive buffer's window (its
  // registration index) and offset; -1 otherwise. Every rank must agree (a violation if not).
  int32_t window = -1;
  uint64_t window_offset = 0;
  // Faults (standin_faults.h) that hit this operation on this rank.
  bool fail = false;
  bool absent = false;
  bool die = false;
};

// The operations of one group, queued on the stream as one item (NCCL launches a group at once).
// Counts them as enqueued on their communicators (the teardown check reads the counts).
Stream::Work makeGroupWork(std::vector<Op> ops);

}  // namespace synk::standin
