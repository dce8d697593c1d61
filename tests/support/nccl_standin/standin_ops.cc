#include "tests/support/nccl_standin/standin_ops.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"

namespace synk::standin {
namespace {

std::string windowPlace(const OpDesc& desc) {
  if (desc.window < 0) return "in no window (ordinary kernels)";
  return str("in window ", desc.window, " at offset ", desc.window_offset, " (symmetric kernels)");
}

const char* kindName(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return "ncclAllReduce";
    case OpKind::Reduce:
      return "ncclReduce";
    case OpKind::Broadcast:
      return "ncclBroadcast";
    case OpKind::AllGather:
      return "ncclAllGather";
    case OpKind::Send:
      return "ncclSend";
    case OpKind::Recv:
      return "ncclRecv";
  }
  return "?";
}

ReduceOp reduceOpOf(ncclRedOp_t redop) {
  switch (redop) {
    case ncclProd:
      return ReduceOp::Prod;
    case ncclMax:
      return ReduceOp::Max;
    case ncclMin:
      return ReduceOp::Min;
    default:
      return ReduceOp::Sum;  // ncclSum, and ncclAvg's sum
  }
}

// Why an operation's wait ended early; Ready means it may go on.
class Run {
 public:
  Run(Op& op, const Stream& stream) : op_(op), stream_(stream) {}
  bool stopped() const { return op_.comm->aborted() || stream_.stopping(); }
  // Waits for ready(); false if the operation must end (abort, stop, hang limit).
  template <typename Ready>
  bool wait(Ready&& ready) {
    const WaitEnd end = op_.comm->segment->waitFor(ready, [this] { return stopped(); });
    if (end == WaitEnd::HangLimit) {
      recordViolation(str("rank ", op_.comm->rank, ": ", kindName(op_.kind), " waited ",
                          faults().hang_limit.count(),
                          " s for its peers (a real NCCL would hang here)"));
      op_.comm->setAsyncError(ncclSystemError);
    }
    return end == WaitEnd::Ready;
  }

 private:
  Op& op_;
  const Stream& stream_;
};

void reduceChunk(const Op& op, Context& ctx, size_t len, std::byte* out) {
  const int n = op.comm->size;
  const size_t bytes = len * dtypeSize(op.dtype);
  if (op.redop == ncclAvg && isFloating(op.dtype)) {
    // ncclAvg on floating types multiplies every contribution by 1/n, then sums.
    std::vector<std::byte> scaled(bytes);
    for (int p = 0; p < n; ++p) {
      std::byte* target = p == 0 ? out : scaled.data();
      host::scaleCopy(target, ctx.slots[p], len, op.dtype, 1.0 / n);
      if (p > 0) host::accumulate(out, scaled.data(), len, op.dtype, ReduceOp::Sum);
    }
    return;
  }
  std::memcpy(out, ctx.slots[0], bytes);
  for (int p = 1; p < n; ++p)
    host::accumulate(out, ctx.slots[p], len, op.dtype, reduceOpOf(op.redop));
  if (op.redop == ncclAvg) {  // integers: the sum divided by n, truncated
    const size_t elem = dtypeSize(op.dtype);
    for (size_t i = 0; i < len; ++i) {
      const double v = host::loadAsDouble(out + i * elem, op.dtype);
      host::storeFromDouble(out + i * elem, op.dtype, std::trunc(v / n));
    }
  }
}

// One collective, step by step (see the header).
void runCollective(Op& op, Run& run) {
  Comm& c = *op.comm;
  Context& ctx = c.context();
  const size_t elem = dtypeSize(op.dtype);
  const size_t per_step = kSlotBytes / elem;
  const auto* send = static_cast<const std::byte*>(op.send);
  auto* recv = static_cast<std::byte*>(op.recv);
  const OpDesc desc{static_cast<uint32_t>(op.kind),
                    static_cast<uint32_t>(op.type),
                    static_cast<uint32_t>(op.redop),
                    op.peer,
                    op.count,
                    op.window,
                    op.window_offset};
  const bool writes = op.kind != OpKind::Broadcast || c.rank == op.peer;
  std::vector<std::byte> reduced;
  for (size_t off = 0; off < op.count; off += per_step) {
    const size_t len = std::min(per_step, op.count - off);
    const uint64_t step = ++c.step;
    auto everyone = [&](auto field, uint64_t at_least) {
      return [&ctx, &c, field, at_least] {
        for (int p = 0; p < c.size; ++p)
          if ((ctx.lines[p].*field).load(std::memory_order_acquire) < at_least) return false;
        return true;
      };
    };
    if (!run.wait(everyone(&RankLine::done, step - 1))) return;  // our slot is free again
    if (writes) std::memcpy(ctx.slots[c.rank], send + off * elem, len * elem);
    ctx.lines[c.rank].desc = desc;
    ctx.lines[c.rank].arrived.store(step, std::memory_order_release);
    c.segment->wake();
    if (!run.wait(everyone(&RankLine::arrived, step))) return;
    for (int p = 0; p < c.size; ++p) {
      const OpDesc& theirs = ctx.lines[p].desc;
      if (theirs == desc) continue;
      const bool same_call = theirs.kind == desc.kind && theirs.dtype == desc.dtype &&
                             theirs.redop == desc.redop && theirs.root == desc.root &&
                             theirs.count == desc.count;
      if (same_call) {
        // NCCL decides from each rank's own registrations: symmetric kernels on one side and
        // ordinary ones (or another window) on the other never meet.
        recordViolation(str("rank ", c.rank, "'s ", kindName(op.kind), " has its buffers ",
                            windowPlace(desc), " while rank ", p, "'s has them ",
                            windowPlace(theirs), ": NCCL would run different kernels"));
        setLastError("nccl-standin: ranks' buffers lie in different windows");
        c.setAsyncError(ncclInvalidUsage);
        return;
      }
      recordViolation(str("rank ", c.rank, " called ", kindName(op.kind), " (count ", op.count,
                          ", type ", op.type, ", root ", op.peer, ") while rank ", p, " called ",
                          kindName(static_cast<OpKind>(theirs.kind)), " (count ", theirs.count,
                          ", type ", theirs.dtype, ", root ", theirs.root, ")"));
      setLastError("nccl-standin: ranks called different collectives");
      c.setAsyncError(ncclInvalidUsage);
      return;
    }
    if (c.world_rank == faults().slow_rank && !c.pause(faults().slow_delay)) return;
    switch (op.kind) {
      case OpKind::AllReduce:
      case OpKind::Reduce:
        if (op.kind == OpKind::Reduce && c.rank != op.peer) break;
        reduced.resize(len * elem);
        reduceChunk(op, ctx, len, reduced.data());
        std::memcpy(recv + off * elem, reduced.data(), len * elem);
        break;
      case OpKind::Broadcast:
        if (recv + off * elem != send + off * elem || c.rank != op.peer) {
          std::memcpy(recv + off * elem, ctx.slots[op.peer], len * elem);
        }
        break;
      case OpKind::AllGather:
        for (int p = 0; p < c.size; ++p)
          std::memcpy(recv + (p * op.count + off) * elem, ctx.slots[p], len * elem);
        break;
      default:
        break;
    }
    ctx.lines[c.rank].done.store(step, std::memory_order_release);
    c.segment->wake();
  }
}

struct Transfer {
  Op* op;
  size_t bytes;
  size_t offset = 0;
  bool done = false;
  Mailbox& box() {
    Context& ctx = op->comm->context();
    return op->kind == OpKind::Send ? ctx.mail[op->comm->rank][op->peer]
                                    : ctx.mail[op->peer][op->comm->rank];
  }
  bool canMove() {
    Mailbox& mb = box();
    const uint64_t written = mb.written.load(std::memory_order_acquire);
    const uint64_t read = mb.read.load(std::memory_order_acquire);
    return op->kind == OpKind::Send ? written == read : written > read;
  }
  // Moves one chunk if the mailbox allows; true if it did.
  bool move() {
    if (done || !canMove()) return false;
    Mailbox& mb = box();
    Comm& c = *op->comm;
    if (op->kind == OpKind::Send) {
      const size_t chunk = std::min(kMailBytes, bytes - offset);
      std::memcpy(mb.data, static_cast<const std::byte*>(op->send) + offset, chunk);
      mb.chunk_bytes = chunk;
      if (offset == 0) mb.message_bytes = bytes;
      mb.written.fetch_add(1, std::memory_order_release);
      offset += chunk;
    } else {
      if (offset == 0 && mb.message_bytes != bytes) {
        recordViolation(str("rank ", c.rank, " receives ", bytes, " bytes from rank ", op->peer,
                            ", which sends ", mb.message_bytes));
        c.setAsyncError(ncclInvalidUsage);
        done = true;
        return true;
      }
      std::memcpy(static_cast<std::byte*>(op->recv) + offset, mb.data, mb.chunk_bytes);
      offset += mb.chunk_bytes;
      mb.read.fetch_add(1, std::memory_order_release);
    }
    c.segment->wake();
    done = offset >= bytes;
    return true;
  }
};

// The send/recv of one group, progressing together until all are done.
void runTransfers(std::vector<Transfer>& transfers, Run& run) {
  while (true) {
    bool moved = false;
    bool all_done = true;
    for (Transfer& t : transfers) {
      moved = t.move() || moved;
      all_done = all_done && t.done;
    }
    if (all_done) return;
    if (moved) continue;
    const bool ready = run.wait([&] {
      return std::any_of(transfers.begin(), transfers.end(),
                         [](Transfer& t) { return !t.done && t.canMove(); });
    });
    if (!ready) return;
  }
}

void executeGroup(std::vector<Op>& ops, const Stream& stream) {
  Run run(ops.front(), stream);
  const Op& first = ops.front();
  if (first.die) raise(SIGKILL);
  if (first.fail) {
    // NCCL reports the failure as the communicator's asynchronous error, and its kernel, whose
    // data never comes, stays on the stream until the communicator is aborted.
    setLastError(str("nccl-standin: injected failure of ", kindName(first.kind), " on rank ",
                     first.comm->rank));
    first.comm->setAsyncError(ncclSystemError);
    run.wait([] { return false; });
  } else if (first.absent) {
    run.wait([] { return false; });  // never takes part
  } else {
    std::vector<Transfer> transfers;
    for (Op& op : ops) {
      if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        const size_t bytes = op.count * dtypeSize(op.dtype);
        if (bytes > 0) transfers.push_back(Transfer{&op, bytes});
        continue;
      }
      Run each(op, stream);
      runCollective(op, each);
    }
    runTransfers(transfers, run);
  }
  bool stopped_by_abort = false;
  for (Op& op : ops) {
    stopped_by_abort = stopped_by_abort || op.comm->aborted();
    op.comm->line(op.comm->rank).ops_finished.fetch_add(1);
    op.comm->segment->wake();
  }
  if (stopped_by_abort) record(first.comm->world_rank).ops_stopped_by_abort.fetch_add(1);
}

}  // namespace

Stream::Work makeGroupWork(std::vector<Op> ops) {
  for (Op& op : ops)
    op.comm->line(op.comm->rank).ops_enqueued.fetch_add(1);
  // shared_ptr: std::function needs a copyable callable.
  auto shared = std::make_shared<std::vector<Op>>(std::move(ops));
  return [shared](const Stream& stream) {
    if (!shared->empty()) executeGroup(*shared, stream);
  };
}

}  // namespace synk::standin
