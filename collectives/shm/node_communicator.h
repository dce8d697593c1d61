#pragma once
// The cpu backend's collectives over several nodes with several ranks per node (cluster/README.md,
// "Data between ranks"): shared memory inside a node, the node leaders (NodeLeaders, the link's
// MPI thread) between nodes. Each collective is one round of the shared-memory protocol
// (ShmExchange: every rank exposes its buffers, CollectiveIn, work, CollectiveOut; the barriers
// span every node) in which only each node's leader works: it reads its node's ranks' buffers,
// moves bytes between nodes, and writes its node's results. Results are one machine's bits:
//  - all_reduce / reduce: a chain in global rank order. Node 0's leader folds its ranks' arrays in
//    rank order (core's block loop, reduce_kernels_impl.h, as the shared-memory communicator does
//    per element), sends the partial to node 1, which continues it with its ranks in order, and so
//    on; the last node scales an avg by 1/size (the sum first, as on one machine), then broadcasts
//    the result (all_reduce) or sends it to the root's node (reduce);
//  - broadcast from any rank: its node's leader broadcasts the root's buffer to the others;
//  - gather / all_gather: a node's ranks' parts are contiguous in global rank order (ranks are
//    node-major), so each leader gathers its node's parts and the leaders gather the nodes'.
// The leader does its node's share alone (its ranks wait at CollectiveOut): simple, and the bytes
// between nodes are what bound it. Every wait keeps the step's deadline; a failure on any rank
// (a leader's MPI work included) is raised on every rank naming it, as on one machine, except a
// leader failing between its MPI jobs: the nodes it would have met stay inside a blocking MPI call
// until the step's deadline names it (cluster/README.md; non-blocking MPI that also watches the
// abort notes is the cure, with the chain's pipelining).
#include <memory>
#include <vector>

#include "synk/collectives/shm/shm_exchange.h"
#include "synk/core/communicator.h"
#include "synk/core/node_span.h"

namespace synk {

class ProcessGroup;

class NodeCommunicator final : public Communicator {
 public:
  // `link_communicator`: on the node's leader (the process that runs the link to the other
  // nodes), the link's host communicator, which must be NodeLeaders too (InternalError
  // otherwise); null on the node's other ranks. `group` and `heap` outlive the communicator.
  NodeCommunicator(ProcessGroup& group, ShmHeap& heap,
                   std::unique_ptr<Communicator> link_communicator);
  const char* name() const override { return "shm + leaders"; }

 protected:
  void doAllReduce(const AllReduceArgs& args, Waiter& waiter) override;
  void doReduce(const ReduceArgs& args, Waiter& waiter) override;
  void doBroadcast(const BroadcastArgs& args, Waiter& waiter) override;
  void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                Waiter& waiter) override;
  void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                   Waiter& waiter) override;

 private:
  using Bytes = NodeLeaders::Bytes;
  using Exposed = ShmExchange::Exposed;
  using Peers = ShmExchange::Peers;
  static constexpr size_t kSlots = 2;  // an input and an output buffer per rank

  // `slot` holding `bytes`, reused unless a job of the link still holds it.
  static Bytes staging(Bytes& slot, size_t bytes);
  int nodeOf(int rank) const { return rank / per_node_; }
  // The leader's chain of a reduction: on return `acc` holds the reduction of every rank on the
  // last node; on the others, the partial up to their last rank (sent on).
  Bytes chain(const Peers& peers, size_t count, DType dtype, ReduceOp op, Waiter& waiter);
  // This node's ranks' parts (slot 0) in rank order, in a staging buffer.
  Bytes nodePart(const Peers& peers, const std::vector<size_t>& counts, size_t elem);
  std::vector<size_t> nodeBytes(const std::vector<size_t>& counts, size_t elem) const;
  // `bytes` of `from` into slot 1 of each of this node's ranks that exposed one.
  void writeOutputs(const Peers& peers, const std::byte* from, size_t bytes) const;

  ShmExchange exchange_;
  std::unique_ptr<Communicator> link_communicator_;
  NodeLeaders* leaders_ = nullptr;  // link_communicator_'s, on the leader only
  int nodes_;
  int node_;
  int per_node_;
  int first_;  // this node's first rank
  Bytes acc_, all_;
};

}  // namespace synk
