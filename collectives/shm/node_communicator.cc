#include "synk/collectives/shm/node_communicator.h"

#include <cstring>

#include "synk/collectives/shm/reduce_kernels_impl.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk {

NodeCommunicator::NodeCommunicator(ProcessGroup& group, ShmHeap& heap,
                                   std::unique_ptr<Communicator> link_communicator)
    : Communicator(group.rank(), group.size()),
      exchange_(group, heap, group.span().firstRank(),
                group.span().firstRank() + group.span().ranks_per_node),
      link_communicator_(std::move(link_communicator)),
      nodes_(group.span().nodes),
      node_(group.span().node),
      per_node_(group.span().ranks_per_node),
      first_(group.span().firstRank()) {
  if (link_communicator_) {
    leaders_ = dynamic_cast<NodeLeaders*>(link_communicator_.get());
    SYNK_CHECK(leaders_ != nullptr, "the link's host communicator '", link_communicator_->name(),
               "' does not move bytes between node leaders");
  }
}

NodeCommunicator::Bytes NodeCommunicator::staging(Bytes& slot, size_t bytes) {
  // Held by a job that outlived its caller (the link may still be inside MPI with it): a new one.
  if (!slot || slot.use_count() > 1) slot = std::make_shared<std::vector<std::byte>>();
  slot->resize(bytes);
  return slot;
}

NodeCommunicator::Bytes NodeCommunicator::chain(const Peers& peers, size_t count, DType dtype,
                                                ReduceOp op, Waiter& waiter) {
  Bytes acc = staging(acc_, count * dtypeSize(dtype));
  const std::byte* in[kMaxRanks + 1];
  int n = 0;
  if (node_ > 0) {  // node k continues node k - 1's partial
    leaders_->receive(acc, node_ - 1, waiter);
    in[n++] = acc->data();
  }
  for (int r = first_; r < first_ + per_node_; ++r)
    in[n++] = peers.at(r, 0);
  const bool last = node_ == nodes_ - 1;
  // avg is the sum of every rank's array times 1/size: only the last node scales.
  const ReduceOp fold = !last && op == ReduceOp::Avg ? ReduceOp::Sum : op;
  std::byte* out = acc->data();
  shm_detail::reduceRange(in, n, &out, 1, 0, count, dtype, fold, size());
  if (!last) leaders_->send(acc, node_ + 1, waiter);
  return acc;
}

void NodeCommunicator::writeOutputs(const Peers& peers, const std::byte* from, size_t bytes) const {
  for (int r = first_; r < first_ + per_node_; ++r) {
    if (std::byte* to = peers.at(r, 1); to != nullptr && bytes > 0) std::memcpy(to, from, bytes);
  }
}

std::vector<size_t> NodeCommunicator::nodeBytes(const std::vector<size_t>& counts,
                                                size_t elem) const {
  std::vector<size_t> bytes(static_cast<size_t>(nodes_), 0);
  for (int r = 0; r < size(); ++r)
    bytes[static_cast<size_t>(nodeOf(r))] += counts[static_cast<size_t>(r)] * elem;
  return bytes;
}

NodeCommunicator::Bytes NodeCommunicator::nodePart(const Peers& peers,
                                                   const std::vector<size_t>& counts, size_t elem) {
  size_t total = 0;
  for (int r = first_; r < first_ + per_node_; ++r)
    total += counts[static_cast<size_t>(r)] * elem;
  Bytes part = staging(acc_, total);
  std::byte* at = part->data();
  for (int r = first_; r < first_ + per_node_; ++r) {
    const size_t bytes = counts[static_cast<size_t>(r)] * elem;
    if (bytes > 0) std::memcpy(at, peers.at(r, 0), bytes);
    at += bytes;
  }
  return part;
}

// In place, the input and the output are the same buffer: the leader reads every input (into
// its partial) before it writes any output.
void NodeCommunicator::doAllReduce(const AllReduceArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t bytes = args.count * dtypeSize(args.dtype);
  Exposed mine[kSlots] = {
      {.user = args.send != nullptr ? args.send : args.buffer, .bytes = bytes, .input = true},
      {.user = args.buffer, .bytes = bytes, .output = true}};
  exchange_.run("allReduce", waiter, mine, kSlots, [&](const Peers& peers) {
    if (leaders_ == nullptr) return;
    const Bytes acc = chain(peers, args.count, args.dtype, args.op, waiter);
    leaders_->broadcast(acc, nodes_ - 1, waiter);
    writeOutputs(peers, acc->data(), bytes);
  });
}

void NodeCommunicator::doReduce(const ReduceArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const bool root = rank() == args.root;
  Exposed mine[kSlots] = {{.user = args.send, .bytes = bytes, .input = true},
                          {.user = args.recv, .bytes = root ? bytes : 0, .output = true}};
  exchange_.run("reduce", waiter, mine, kSlots, [&](const Peers& peers) {
    if (leaders_ == nullptr) return;
    const Bytes acc = chain(peers, args.count, args.dtype, args.op, waiter);
    const int root_node = nodeOf(args.root), last = nodes_ - 1;
    if (root_node != last && node_ == last) leaders_->send(acc, root_node, waiter);
    if (root_node != last && node_ == root_node) leaders_->receive(acc, last, waiter);
    if (node_ == root_node) std::memcpy(peers.at(args.root, 1), acc->data(), bytes);
  });
}

void NodeCommunicator::doBroadcast(const BroadcastArgs& args, Waiter& waiter) {
  waiter.check();
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const bool root = rank() == args.root;
  // Out of place the root sends `send` and receives into its buffer like every rank.
  const bool copy_at_root = root && args.send != nullptr && args.send != args.buffer;
  Exposed mine[kSlots] = {
      {.user = copy_at_root ? args.send : args.buffer, .bytes = root ? bytes : 0, .input = true},
      {.user = args.buffer, .bytes = !root || copy_at_root ? bytes : 0, .output = true}};
  exchange_.run("broadcast", waiter, mine, kSlots, [&](const Peers& peers) {
    if (leaders_ == nullptr) return;
    const int root_node = nodeOf(args.root);
    const Bytes acc = staging(acc_, bytes);
    if (node_ == root_node) std::memcpy(acc->data(), peers.at(args.root, 0), bytes);
    leaders_->broadcast(acc, root_node, waiter);
    writeOutputs(peers, acc->data(), bytes);
  });
}

void NodeCommunicator::doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                                Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  const bool root = rank() == args.root;
  Exposed mine[kSlots] = {
      {.user = args.send, .bytes = args.counts[static_cast<size_t>(rank())] * elem, .input = true},
      {.user = args.recv, .bytes = root ? offsets.back() * elem : 0, .output = true}};
  exchange_.run("gather", waiter, mine, kSlots, [&](const Peers& peers) {
    if (leaders_ == nullptr) return;
    const int root_node = nodeOf(args.root);
    const Bytes all = staging(all_, 0);
    leaders_->gather(nodePart(peers, args.counts, elem), all, nodeBytes(args.counts, elem),
                     root_node, waiter);
    if (node_ == root_node) std::memcpy(peers.at(args.root, 1), all->data(), all->size());
  });
}

void NodeCommunicator::doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                                   Waiter& waiter) {
  waiter.check();
  const size_t elem = dtypeSize(args.dtype);
  Exposed mine[kSlots] = {
      {.user = args.send, .bytes = args.counts[static_cast<size_t>(rank())] * elem, .input = true},
      {.user = args.recv, .bytes = offsets.back() * elem, .output = true}};
  exchange_.run("allGather", waiter, mine, kSlots, [&](const Peers& peers) {
    if (leaders_ == nullptr) return;
    const Bytes all = staging(all_, 0);
    leaders_->gather(nodePart(peers, args.counts, elem), all, nodeBytes(args.counts, elem), -1,
                     waiter);
    writeOutputs(peers, all->data(), all->size());
  });
}

}  // namespace synk
