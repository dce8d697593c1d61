// A session's collectives across nodes with one rank per node (cluster/README.md): every rank is
// its node's leader, so each collective is the leaders' (leader_ops.h) on the node bridge's MPI
// thread (NodeBridge::onMpiThread), node order being rank order. Results equal one machine's:
// reductions combine the ranks' arrays in rank order with core's host kernels; gathers are in
// rank order. Host memory only (the cpu backend's). The MPI work sees only a staging buffer it
// co-owns, never the caller's: a job that outlives its caller (a deadline passed while MPI waited
// for a node) cannot write into memory the caller has since freed. All-reduce, reduce and
// broadcast go through it in chunks (chunk_pipeline.h): the caller copies the next chunk in and
// the last one's result out while the MPI thread works on one, so the copies hide under MPI.
// With several ranks per node the same object is the node's leader's part (NodeLeaders,
// core/process/node_span.h): the node communicator (collectives/shm/node_communicator.h) brings
// the node's ranks together in shared memory and its leader moves bytes between nodes here.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "synk/cluster/launch_env.h"
#include "synk/cluster/node_bridge.h"
#include "synk/core/communicator.h"
#include "synk/core/node_span.h"

namespace synk::cluster {

class LeaderCommunicator final : public Communicator, public NodeLeaders {
 public:
  // Its collectives are the nodes' (rank = node): the session's where each node has one rank.
  LeaderCommunicator(NodeBridge& bridge, const NodeLayout& layout);
  const char* name() const override { return "leaders"; }
  // The chunk of a pipelined collective: a few MiB keep MPI at its rate while the copies of the
  // first chunk in and of the last out (which do not overlap MPI) stay short.
  static constexpr size_t kChunkBytes = size_t{4} << 20;

  void send(const Bytes& bytes, int to, Waiter& waiter) override;
  void receive(const Bytes& bytes, int from, Waiter& waiter) override;
  void broadcast(const Bytes& bytes, int root, Waiter& waiter) override;
  void gather(const Bytes& part, const Bytes& all, const std::vector<size_t>& node_bytes, int root,
              Waiter& waiter) override;
  using Communicator::broadcast;
  using Communicator::gather;

 protected:
  void doAllReduce(const AllReduceArgs& args, Waiter& waiter) override;
  void doReduce(const ReduceArgs& args, Waiter& waiter) override;
  void doBroadcast(const BroadcastArgs& args, Waiter& waiter) override;
  void doGather(const GatherArgs& args, const std::vector<size_t>& offsets,
                Waiter& waiter) override;
  void doAllGather(const AllGatherArgs& args, const std::vector<size_t>& offsets,
                   Waiter& waiter) override;

 private:
  using Staging = std::shared_ptr<std::vector<std::byte>>;
  // `slot`'s staging buffer sized to `bytes`, reused unless a job still holds it.
  static Staging staging(Staging& slot, size_t bytes);
  void run(const char* what, std::function<void()> work, Waiter& waiter);
  // `in` (bytes; nullptr: this node has nothing to give) through a staging buffer, chunk by
  // chunk, each chunk's bytes through `chunk_work` on the MPI thread, into `out` (nullptr: this
  // node keeps nothing), chunk_pipeline.h.
  void runPipelined(const char* what, const void* in, void* out, size_t bytes, size_t elem,
                    std::function<void(std::byte* data, size_t bytes)> chunk_work, Waiter& waiter);
  // Each node's `send` (counts[node] elements) gathered in node order into `recv` at node `root`,
  // or at every node where root < 0 (an all-gather).
  void gatherThrough(const void* send, void* recv, const std::vector<size_t>& counts, DType dtype,
                     int root, Waiter& waiter);
  // `send` (count elements) all-reduced in node order into `recv` (nullptr: kept nowhere).
  void reducePipelined(const char* what, const void* send, void* recv, size_t count, DType dtype,
                       ReduceOp op, Waiter& waiter);

  NodeBridge& bridge_;
  int nodes_;
  int node_;
  Staging staging_;
  Staging gathered_;  // what a gather brings in
};

}  // namespace synk::cluster
