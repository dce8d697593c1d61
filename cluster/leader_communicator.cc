#include "synk/cluster/leader_communicator.h"

#include <cstring>
#include <utility>

#include "synk/cluster/chunk_pipeline.h"
#include "synk/cluster/leader_ops.h"
#include "synk/core/error.h"

namespace synk::cluster {
namespace {

std::vector<size_t> bytesPerNode(const std::vector<size_t>& counts, DType dtype) {
  std::vector<size_t> bytes(counts.size());
  for (size_t k = 0; k < counts.size(); ++k)
    bytes[k] = counts[k] * dtypeSize(dtype);
  return bytes;
}

size_t total(const std::vector<size_t>& bytes) {
  size_t sum = 0;
  for (size_t b : bytes)
    sum += b;
  return sum;
}

}  // namespace

LeaderCommunicator::LeaderCommunicator(NodeBridge& bridge, const NodeLayout& layout)
    : Communicator(layout.node, layout.nodes),
      bridge_(bridge),
      nodes_(layout.nodes),
      node_(layout.node) {}

void LeaderCommunicator::send(const Bytes& bytes, int to, Waiter& waiter) {
  run(
      "send across nodes",
      [bytes, to] { detail::sendBytes(bytes->data(), bytes->size(), to, "send across nodes"); },
      waiter);
}

void LeaderCommunicator::receive(const Bytes& bytes, int from, Waiter& waiter) {
  run(
      "receive across nodes",
      [bytes, from] {
        detail::receiveBytes(bytes->data(), bytes->size(), from, "receive across nodes");
      },
      waiter);
}

void LeaderCommunicator::broadcast(const Bytes& bytes, int root, Waiter& waiter) {
  run(
      "broadcast across nodes",
      [bytes, root] {
        detail::broadcastBytes(bytes->data(), bytes->size(), root, "broadcast across nodes");
      },
      waiter);
}

void LeaderCommunicator::gather(const Bytes& part, const Bytes& all,
                                const std::vector<size_t>& node_bytes, int root, Waiter& waiter) {
  if (root < 0 || root == node_) all->resize(total(node_bytes));
  const int node = node_;
  run(
      root < 0 ? "all_gather across nodes" : "gather across nodes",
      [part, all, node_bytes, root, node] {
        if (root < 0) {
          detail::allGatherBytes(part->data(), all->data(), node_bytes, node,
                                 "all_gather across nodes");
        } else {
          detail::gatherBytes(part->data(), node == root ? all->data() : nullptr, node_bytes, root,
                              node, "gather across nodes");
        }
      },
      waiter);
}

LeaderCommunicator::Staging LeaderCommunicator::staging(Staging& slot, size_t bytes) {
  // Held by a job that outlived its caller (the bridge may still be inside MPI with it): a new
  // one, so that buffer is never handed out again.
  if (!slot || slot.use_count() > 1) slot = std::make_shared<std::vector<std::byte>>();
  slot->resize(bytes);
  return slot;
}

void LeaderCommunicator::run(const char* what, std::function<void()> work, Waiter& waiter) {
  bridge_.onMpiThread(what, std::move(work), waiter);
}

void LeaderCommunicator::runPipelined(const char* what, const void* in, void* out, size_t bytes,
                                      size_t elem,
                                      std::function<void(std::byte* data, size_t bytes)> chunk_work,
                                      Waiter& waiter) {
  const auto pipe =
      std::make_shared<ChunkPipeline>(staging(staging_, bytes), bytes, kChunkBytes / elem * elem);
  const auto* from = static_cast<const std::byte*>(in);
  auto* to = static_cast<std::byte*>(out);
  pipe->step(from, to);  // the first chunk in before the job starts
  try {
    bridge_.onMpiThread(
        what, [pipe, chunk_work = std::move(chunk_work), what] { pipe->run(chunk_work, what); },
        waiter, [&pipe, from, to] { return pipe->step(from, to); });
  } catch (...) {
    // Gave up (deadline, abort) or the job failed: the job stops at its next chunk; it only ever
    // touches the pipeline's own staging buffer, and nothing here writes into `out` any more.
    pipe->abandon();
    throw;
  }
  pipe->finish(to);
}

void LeaderCommunicator::reducePipelined(const char* what, const void* send, void* recv,
                                         size_t count, DType dtype, ReduceOp op, Waiter& waiter) {
  const size_t elem = dtypeSize(dtype);
  const int nodes = nodes_, node = node_;
  runPipelined(
      what, send, recv, count * elem, elem,
      [elem, dtype, op, nodes, node, what](std::byte* data, size_t bytes) {
        detail::allReduceInNodeOrder(data, bytes / elem, dtype, op, nodes, node, what);
      },
      waiter);
}

void LeaderCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  reducePipelined("all_reduce across nodes", args.send != nullptr ? args.send : args.buffer,
                  args.buffer, args.count, args.dtype, args.op, waiter);
}

// Every node ends with the reduction (the bytes of an all-reduce, which two nodes move anyway);
// the root keeps it.
void LeaderCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  reducePipelined("reduce across nodes", args.send, node_ == args.root ? args.recv : nullptr,
                  args.count, args.dtype, args.op, waiter);
}

void LeaderCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  const size_t elem = dtypeSize(args.dtype);
  const void* in = nullptr;
  void* out = args.buffer;
  if (node_ == args.root) {
    in = args.send != nullptr ? args.send : args.buffer;
    if (in == out) out = nullptr;  // the root's buffer holds it already
  }
  const int root = args.root;
  runPipelined(
      "broadcast across nodes", in, out, args.count * elem, elem,
      [root](std::byte* data, size_t bytes) {
        detail::broadcastBytes(data, bytes, root, "broadcast across nodes");
      },
      waiter);
}

void LeaderCommunicator::gatherThrough(const void* send, void* recv,
                                       const std::vector<size_t>& counts, DType dtype, int root,
                                       Waiter& waiter) {
  const std::vector<size_t> node_bytes = bytesPerNode(counts, dtype);
  const size_t mine = node_bytes[static_cast<size_t>(node_)];
  Staging part = staging(staging_, mine);
  std::memcpy(part->data(), send, mine);
  Staging all = staging(gathered_, total(node_bytes));
  gather(part, all, node_bytes, root, waiter);
  if (root < 0 || root == node_) std::memcpy(recv, all->data(), all->size());
}

void LeaderCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>&,
                                  Waiter& waiter) {
  gatherThrough(args.send, args.recv, args.counts, args.dtype, args.root, waiter);
}

void LeaderCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>&,
                                     Waiter& waiter) {
  gatherThrough(args.send, args.recv, args.counts, args.dtype, -1, waiter);
}

}  // namespace synk::cluster
