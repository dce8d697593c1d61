#include "synk/cluster/leader_communicator.h"

#include <cstring>

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

}  // namespace

LeaderCommunicator::LeaderCommunicator(NodeBridge& bridge, const NodeLayout& layout)
    : Communicator(layout.node, layout.nodes),
      bridge_(bridge),
      nodes_(layout.nodes),
      node_(layout.node) {
  if (layout.ranks_per_node != 1) {
    throw InvalidArgument(
        str("the leaders' communicator takes one rank per node, not ", layout.ranks_per_node));
  }
}

void LeaderCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  if (args.send != nullptr && args.send != args.buffer) std::memcpy(args.buffer, args.send, bytes);
  bridge_.onMpiThread(
      "all_reduce across nodes",
      [&] {
        detail::allReduceInNodeOrder(args.buffer, args.count, args.dtype, args.op, nodes_, node_,
                                     "all_reduce across nodes");
      },
      waiter);
}

// Every node ends with the reduction (the bytes of an all-reduce, which two nodes move anyway);
// the root keeps it.
void LeaderCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  scratch_.resize(bytes);
  std::memcpy(scratch_.data(), args.send, bytes);
  bridge_.onMpiThread(
      "reduce across nodes",
      [&] {
        detail::allReduceInNodeOrder(scratch_.data(), args.count, args.dtype, args.op, nodes_,
                                     node_, "reduce across nodes");
      },
      waiter);
  if (node_ == args.root) std::memcpy(args.recv, scratch_.data(), bytes);
}

void LeaderCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  if (node_ == args.root && args.send != nullptr && args.send != args.buffer) {
    std::memcpy(args.buffer, args.send, bytes);
  }
  bridge_.onMpiThread(
      "broadcast across nodes",
      [&] { detail::broadcastBytes(args.buffer, bytes, args.root, "broadcast across nodes"); },
      waiter);
}

void LeaderCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>&,
                                  Waiter& waiter) {
  const std::vector<size_t> bytes = bytesPerNode(args.counts, args.dtype);
  bridge_.onMpiThread(
      "gather across nodes",
      [&] {
        detail::gatherBytes(args.send, args.recv, bytes, args.root, node_, "gather across nodes");
      },
      waiter);
}

void LeaderCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>&,
                                     Waiter& waiter) {
  const std::vector<size_t> bytes = bytesPerNode(args.counts, args.dtype);
  bridge_.onMpiThread(
      "all_gather across nodes",
      [&] {
        detail::allGatherBytes(args.send, args.recv, bytes, node_, "all_gather across nodes");
      },
      waiter);
}

}  // namespace synk::cluster
