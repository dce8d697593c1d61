#include "synk/cluster/leader_communicator.h"

#include <cstring>
#include <utility>

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

LeaderCommunicator::Staging LeaderCommunicator::staging(size_t bytes) {
  // Held by a job that outlived its caller (the bridge may still be inside MPI with it): a new
  // one, so that buffer is never handed out again.
  if (!staging_ || staging_.use_count() > 1) staging_ = std::make_shared<std::vector<std::byte>>();
  staging_->resize(bytes);
  return staging_;
}

void LeaderCommunicator::run(const char* what, std::function<void()> work, Waiter& waiter) {
  bridge_.onMpiThread(what, std::move(work), waiter);
}

LeaderCommunicator::Staging LeaderCommunicator::reduceStaged(const char* what, const void* send,
                                                             size_t count, DType dtype, ReduceOp op,
                                                             Waiter& waiter) {
  const size_t bytes = count * dtypeSize(dtype);
  Staging buffer = staging(bytes);
  std::memcpy(buffer->data(), send, bytes);
  const int nodes = nodes_, node = node_;
  run(
      what,
      [buffer, count, dtype, op, nodes, node, what] {
        detail::allReduceInNodeOrder(buffer->data(), count, dtype, op, nodes, node, what);
      },
      waiter);
  return buffer;
}

void LeaderCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  const Staging sum =
      reduceStaged("all_reduce across nodes", args.send != nullptr ? args.send : args.buffer,
                   args.count, args.dtype, args.op, waiter);
  std::memcpy(args.buffer, sum->data(), args.count * dtypeSize(args.dtype));
}

// Every node ends with the reduction (the bytes of an all-reduce, which two nodes move anyway);
// the root keeps it.
void LeaderCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  const Staging sum =
      reduceStaged("reduce across nodes", args.send, args.count, args.dtype, args.op, waiter);
  if (node_ == args.root) std::memcpy(args.recv, sum->data(), args.count * dtypeSize(args.dtype));
}

void LeaderCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  Staging buffer = staging(bytes);
  if (node_ == args.root) {
    std::memcpy(buffer->data(), args.send != nullptr ? args.send : args.buffer, bytes);
  }
  const int root = args.root;
  run(
      "broadcast across nodes",
      [buffer, bytes, root] {
        detail::broadcastBytes(buffer->data(), bytes, root, "broadcast across nodes");
      },
      waiter);
  std::memcpy(args.buffer, buffer->data(), bytes);
}

void LeaderCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>&,
                                  Waiter& waiter) {
  std::vector<size_t> node_bytes = bytesPerNode(args.counts, args.dtype);
  const size_t mine = node_bytes[static_cast<size_t>(node_)];
  const size_t all = total(node_bytes);
  // One buffer: this node's part, then (at the root) every node's.
  Staging buffer = staging(mine + (node_ == args.root ? all : 0));
  std::memcpy(buffer->data(), args.send, mine);
  const int root = args.root, node = node_;
  run(
      "gather across nodes",
      [buffer, node_bytes = std::move(node_bytes), mine, root, node] {
        std::byte* recv = node == root ? buffer->data() + mine : nullptr;
        detail::gatherBytes(buffer->data(), recv, node_bytes, root, node, "gather across nodes");
      },
      waiter);
  if (node_ == args.root) std::memcpy(args.recv, buffer->data() + mine, all);
}

void LeaderCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>&,
                                     Waiter& waiter) {
  std::vector<size_t> node_bytes = bytesPerNode(args.counts, args.dtype);
  const size_t mine = node_bytes[static_cast<size_t>(node_)];
  const size_t all = total(node_bytes);
  Staging buffer = staging(mine + all);
  std::memcpy(buffer->data(), args.send, mine);
  const int node = node_;
  run(
      "all_gather across nodes",
      [buffer, node_bytes = std::move(node_bytes), mine, node] {
        detail::allGatherBytes(buffer->data(), buffer->data() + mine, node_bytes, node,
                               "all_gather across nodes");
      },
      waiter);
  std::memcpy(args.recv, buffer->data() + mine, all);
}

}  // namespace synk::cluster
