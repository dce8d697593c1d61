#include "tests/support/nccl_standin/standin_calls.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "synk/core/error.h"
#include "tests/support/nccl_standin/standin_ops.h"

namespace synk::standin {
namespace {

// Collective calls since this process created its last communicator (Fault::index counts them).
std::atomic<int> g_collective_calls{0};

// ncclGroupStart/End state, per thread as in NCCL (src/group.cc: __thread ncclGroupDepth, ...).
struct GroupState {
  int depth = 0;
  std::vector<Op> ops;
  cudaStream_t stream = nullptr;
  ncclResult_t error = ncclSuccess;
};
thread_local GroupState g_group;

template <typename Field>
auto everyone(Comm& comm, Field field, uint64_t at_least) {
  return [&comm, field, at_least] {
    for (int p = 0; p < comm.size; ++p)
      if ((comm.line(p).*field).load(std::memory_order_acquire) < at_least) return false;
    return true;
  };
}

ncclResult_t injected(Call call, int rank) {
  setLastError(str("nccl-standin: injected failure of ", callName(call), " on rank ", rank));
  return ncclSystemError;
}

ncclResult_t waitResult(Comm& comm, WaitEnd end, const char* what) {
  if (end == WaitEnd::Ready) return ncclSuccess;
  if (end == WaitEnd::HangLimit) {
    recordViolation(str("rank ", comm.rank, ": ", what, " waited ", faults().hang_limit.count(),
                        " s for its peers (a real NCCL would hang here)"));
  }
  return ncclSystemError;
}

// The start of every job of `call`: the scripted faults, then the job's delay. ncclSuccess: go on.
ncclResult_t jobPrologue(Comm& comm, Call call, std::chrono::milliseconds delay) {
  const Faults& f = faults();
  if (f.die.hits(call, comm.world_rank)) {
    comm.pause(delay / 2);
    raise(SIGKILL);
  }
  if (!comm.pause(delay)) return ncclSystemError;  // aborted: nobody reads the result
  if (f.fail.hits(call, comm.world_rank)) return injected(call, comm.world_rank);
  if (f.absent.hits(call, comm.world_rank)) {
    // Never arrives: waits (without its peers seeing it) until aborted.
    const auto limit = std::chrono::steady_clock::now() + f.hang_limit;
    while (comm.pause(std::chrono::milliseconds(10))) {
      if (std::chrono::steady_clock::now() > limit) {
        return waitResult(comm, WaitEnd::HangLimit, callName(call));
      }
    }
    return ncclSystemError;
  }
  return ncclSuccess;
}

// The split's rendezvous in the parent's context. The leader (the lowest parent rank with a
// color) takes the next context for the child; -1 in *child_context: NCCL_SPLIT_NOCOLOR.
ncclResult_t splitRendezvous(Comm& parent, int color, int key, int* child_context, int* child_rank,
                             int* child_size) {
  Context& ctx = parent.context();
  const uint64_t seq = ++parent.split_seq;
  // The split area is reused: wait until every rank has read the previous split's.
  ncclResult_t r = waitResult(
      parent, parent.waitFor(everyone(parent, &RankLine::split_done, seq - 1)), "ncclCommSplit");
  if (r != ncclSuccess) return r;
  RankLine& mine = parent.line(parent.rank);
  mine.color = color;
  mine.key = key;
  mine.split_arrived.store(seq, std::memory_order_release);
  parent.segment->wake();
  r = waitResult(parent, parent.waitFor(everyone(parent, &RankLine::split_arrived, seq)),
                 "ncclCommSplit");
  if (r != ncclSuccess) return r;
  std::vector<int> members;
  for (int p = 0; p < parent.size; ++p) {
    const int theirs = parent.line(p).color;
    if (theirs == NCCL_SPLIT_NOCOLOR) continue;
    if (!members.empty() && theirs != parent.line(members.front()).color) {
      return refuse(ncclInvalidUsage, "the stand-in supports one color per split");
    }
    members.push_back(p);
  }
  *child_context = -1;
  if (!members.empty()) {
    if (parent.rank == members.front()) {
      const int next = parent.segment->layout().next_context.fetch_add(1) + 1;
      const int child = next < kMaxContexts ? next : -1;
      if (child >= 0) parent.segment->context(child).size.store(static_cast<int>(members.size()));
      ctx.split_child.store(child);
      ctx.split_published.store(seq, std::memory_order_release);
      parent.segment->wake();
    }
    r = waitResult(parent, parent.waitFor([&] { return ctx.split_published.load() >= seq; }),
                   "ncclCommSplit");
    if (r != ncclSuccess) return r;
    *child_context = ctx.split_child.load();
    // Child ranks in the order of (key, parent rank).
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return parent.line(a).key < parent.line(b).key; });
    *child_rank =
        static_cast<int>(std::find(members.begin(), members.end(), parent.rank) - members.begin());
    *child_size = static_cast<int>(members.size());
  }
  mine.split_done.store(seq, std::memory_order_release);
  parent.segment->wake();
  if (color != NCCL_SPLIT_NOCOLOR && *child_context < 0) {
    return refuse(ncclInternalError, str("no room for a communicator past ", kMaxContexts));
  }
  return ncclSuccess;
}

bool enqueue(std::vector<Op> ops, cudaStream_t handle) {
  const std::shared_ptr<Stream> stream = Stream::find(handle);
  if (!stream || stream->stopping()) {
    setLastError("nccl-standin: the stream does not exist (destroyed?)");
    return false;
  }
  return stream->enqueue(makeGroupWork(std::move(ops)));
}

ncclResult_t launch(std::vector<Op> ops, cudaStream_t stream) {
  if (ops.empty()) return ncclSuccess;
  const std::shared_ptr<Comm> comm = ops.front().comm;
  for (const Op& op : ops) {
    if (op.comm != comm) return refuse(ncclInvalidUsage, "a group spans one communicator here");
    ops.front().fail = ops.front().fail || op.fail;
    ops.front().absent = ops.front().absent || op.absent;
    ops.front().die = ops.front().die || op.die;
  }
  if (comm->blocking) {
    // An injected failure surfaces later, as the communicator's asynchronous error.
    return enqueue(std::move(ops), stream) ? ncclSuccess : ncclInvalidArgument;
  }
  // Non-blocking: the job enqueues the work (src/group.cc, groupLaunchNonBlocking).
  Comm* c = comm.get();
  return comm->run([c, ops = std::move(ops), stream]() mutable {
    if (!c->pause(faults().job_delay)) return ncclSystemError;
    if (ops.front().fail) return injected(Call::Collective, c->world_rank);
    return enqueue(std::move(ops), stream) ? ncclSuccess : ncclInvalidArgument;
  });
}

bool dtypeOf(ncclDataType_t type, DType* dtype) {
  switch (type) {
    case ncclFloat32:
      *dtype = DType::Float32;
      return true;
    case ncclFloat64:
      *dtype = DType::Float64;
      return true;
    case ncclInt32:
      *dtype = DType::Int32;
      return true;
    case ncclInt64:
      *dtype = DType::Int64;
      return true;
    case ncclUint8:
      *dtype = DType::UInt8;
      return true;
    case ncclFloat16:
      *dtype = DType::Float16;
      return true;
    case ncclBfloat16:
      *dtype = DType::BFloat16;
      return true;
    default:
      return false;
  }
}

}  // namespace

ncclResult_t refuse(ncclResult_t result, const std::string& why) {
  setLastError(str("nccl-standin: ", why));
  if (g_group.depth > 0 && g_group.error == ncclSuccess) g_group.error = result;
  return result;
}

// A freed or never created handle: undefined behaviour in NCCL, a violation here.
ncclResult_t unknownComm(const char* call, ncclComm_t comm) {
  recordViolation(str(call, " on communicator ", static_cast<const void*>(comm),
                      ", which does not exist (freed by destroy or abort, or never created)"));
  return refuse(ncclInvalidArgument, str(call, ": invalid communicator"));
}

ncclResult_t initJob(Comm& comm, const ncclUniqueId& id) {
  if (ncclResult_t r = jobPrologue(comm, Call::Init, faults().job_delay); r != ncclSuccess) {
    return r;
  }
  std::string error;
  comm.segment = Segment::attach(id, comm.size, &error);
  if (!comm.segment) {
    setLastError(str("nccl-standin: ncclCommInitRankConfig: ", error));
    return ncclSystemError;
  }
  Context& ctx = comm.context();
  uint32_t expected = 0;
  if (!ctx.lines[comm.rank].joined.compare_exchange_strong(expected, 1)) {
    setLastError(str("nccl-standin: two processes claim rank ", comm.rank));
    return ncclInvalidUsage;
  }
  comm.segment->wake();
  return waitResult(comm, comm.waitFor([&] {
    for (int p = 0; p < comm.size; ++p)
      if (ctx.lines[p].joined.load() == 0) return false;
    return true;
  }),
                    "ncclCommInitRankConfig");
}

ncclResult_t splitJob(Comm& parent, int color, int key, ncclComm_t* slot, bool blocking) {
  const Faults& f = faults();
  if (ncclResult_t r = jobPrologue(parent, Call::Split, f.split_delay + f.job_delay);
      r != ncclSuccess) {
    return r;
  }
  int context = -1;
  int rank = 0;
  int size = 0;
  if (ncclResult_t r = splitRendezvous(parent, color, key, &context, &rank, &size);
      r != ncclSuccess) {
    return r;
  }
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  auto child = std::make_shared<Comm>(blocking, rank, size, parent.world_rank);
  child->segment = parent.segment;
  child->context_index = context;
  registerComm(child);
  // The job's last act, as in NCCL (src/init.cc, ncclCommInitRankFunc): the caller's slot.
  __atomic_store_n(slot, child->handle(), __ATOMIC_RELEASE);
  return ncclSuccess;
}

ncclResult_t waitOwnOps(Comm& comm) {
  if (!comm.segment) return ncclSuccess;  // never attached: nothing was queued
  RankLine& mine = comm.line(comm.rank);
  return waitResult(
      comm, comm.waitFor([&] { return mine.ops_finished.load() >= mine.ops_enqueued.load(); }),
      "ncclCommFinalize");
}

ncclResult_t finalizeJob(Comm& comm) {
  if (ncclResult_t r = jobPrologue(comm, Call::Finalize, faults().job_delay); r != ncclSuccess) {
    return r;
  }
  return waitOwnOps(comm);
}

ncclResult_t issue(OpKind kind, const char* call, const void* send, void* recv, size_t count,
                   ncclDataType_t type, ncclRedOp_t redop, int peer, ncclComm_t handle,
                   cudaStream_t stream) {
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm(call, handle);
  // NCCL's ncclEnqueueCheck → ncclCommEnsureReady (src/enqueue.cc).
  if (ncclResult_t ready = comm->ensureReady(true); ready != ncclSuccess) {
    return refuse(ready, str(call, ": ", lastError()));
  }
  Op op{kind, comm};
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.type = type;
  op.redop = redop;
  op.peer = peer;
  if (!dtypeOf(type, &op.dtype)) return refuse(ncclInvalidArgument, str(call, ": data type"));
  const bool reduces = kind == OpKind::AllReduce || kind == OpKind::Reduce;
  if (reduces && (redop < ncclSum || redop > ncclAvg)) {
    return refuse(ncclInvalidArgument, str(call, ": reduction op ", redop));
  }
  const bool has_peer = kind != OpKind::AllReduce && kind != OpKind::AllGather;
  if (has_peer && (peer < 0 || peer >= comm->size)) {
    return refuse(ncclInvalidArgument, str(call, ": root/peer ", peer, " of ", comm->size));
  }
  if (!Stream::find(stream)) return refuse(ncclInvalidArgument, str(call, ": invalid stream"));
  if (!comm->windows.empty()) {
    record(comm->world_rank).ops_on_window_comms.fetch_add(1);
    const size_t part = count * dtypeSize(op.dtype);
    const size_t received = kind == OpKind::AllGather ? part * comm->size : part;
    uint64_t send_offset = 0;
    const bool symmetric_kind = kind == OpKind::AllReduce || kind == OpKind::AllGather;
    if (recv != nullptr && comm->inWindow(recv, received)) {
      record(comm->world_rank).window_ops.fetch_add(1);
      if (symmetric_kind && send != nullptr && comm->windowAt(send, part, &send_offset) >= 0) {
        op.window = comm->windowAt(recv, received, &op.window_offset);
      }
    }
  }
  const int index = g_collective_calls.fetch_add(1);
  const Faults& f = faults();
  op.fail = f.fail.hits(Call::Collective, comm->world_rank, index);
  op.absent = f.absent.hits(Call::Collective, comm->world_rank, index);
  op.die = f.die.hits(Call::Collective, comm->world_rank, index);
  if (g_group.depth > 0) {
    g_group.ops.push_back(std::move(op));
    g_group.stream = stream;
    return ncclSuccess;
  }
  std::vector<Op> single;
  single.push_back(std::move(op));
  return launch(std::move(single), stream);
}

void resetCollectiveCount() {
  g_collective_calls.store(0);
}

ncclResult_t groupStart() {
  ++g_group.depth;
  return ncclSuccess;
}

ncclResult_t groupEnd() {
  if (g_group.depth == 0) return refuse(ncclInvalidUsage, "ncclGroupEnd: not in a group call.");
  if (--g_group.depth > 0) return ncclSuccess;
  GroupState group = std::move(g_group);
  g_group = GroupState{};
  if (group.error != ncclSuccess) {
    // Nothing of a failed group runs; its non-blocking communicators carry the error
    // (src/group.cc, groupCleanup → ncclCommSetAsyncError).
    for (const Op& op : group.ops)
      if (!op.comm->blocking) op.comm->setAsyncError(group.error);
    return group.error;
  }
  return launch(std::move(group.ops), group.stream);
}

}  // namespace synk::standin
