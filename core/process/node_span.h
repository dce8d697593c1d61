#pragma once
// A session over several nodes (cluster/README.md): one launcher process per node (mpirun,
// srun), each forking its node's ranks; ranks numbered node-major, the master (global rank
// `ForkOptions::master_rank`) on node 0. core knows nodes only through this: which ranks live
// here, and the link that carries the session's barriers to the other nodes (cluster/'s
// NodeBridge), which core starts in the launcher right after the fork and ends at shutdown.
// One node (the default) is one machine, exactly as without it.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "synk/core/control_block.h"

namespace synk {

class Communicator;
class Waiter;

// The node leaders' data operations, for a backend whose ranks share memory inside a node and
// whose collectives cross nodes through each node's leader (collectives/shm/node_communicator.h):
// the link's host communicator implements it besides Communicator (whose collectives it runs over
// nodes: rank = node). Only a leader calls these, every leader the same ones in the same order
// (the point-to-point ones: the two nodes named). Each runs on the link's MPI thread and is waited
// for with `waiter` (a Timeout at its deadline; the link is then unusable). The work co-owns
// `bytes` and touches nothing else: it may outlive a wait that gave up.
class NodeLeaders {
 public:
  using Bytes = std::shared_ptr<std::vector<std::byte>>;
  virtual ~NodeLeaders() = default;
  // All of *bytes to node `to`, which receives them.
  virtual void send(const Bytes& bytes, int to, Waiter& waiter) = 0;
  // bytes->size() bytes from node `from`, which sends them.
  virtual void receive(const Bytes& bytes, int from, Waiter& waiter) = 0;
  // Node `root`'s bytes into every node's (the same size on every node).
  virtual void broadcast(const Bytes& bytes, int root, Waiter& waiter) = 0;
  // Node k's part (node_bytes[k] bytes, `part` on node k) concatenated in node order into `all`
  // (sized to the sum) on node `root`, or on every node where root < 0.
  virtual void gather(const Bytes& part, const Bytes& all, const std::vector<size_t>& node_bytes,
                      int root, Waiter& waiter) = 0;
};

class NodeLink {
 public:
  // Destroying it ends the link (and joins what it runs, unless that may be inside MPI for good:
  // then it is left to the process's end, told not to touch the control block again).
  virtual ~NodeLink() = default;
  // Asks it to end after the barrier in flight (the node's ranks are done).
  virtual void stop() = 0;
  // The collectives across nodes of this process's rank, on host memory (the cpu backend's):
  // rank = node. Where each node has one rank (NodeSpan::ranks_per_node == 1) they are the
  // session's; with more, what it returns is also the NodeLeaders the node's ranks go through.
  virtual std::unique_ptr<Communicator> hostCommunicator() = 0;
};

struct NodeSpan {
  int nodes = 1;
  int node = 0;
  int ranks_per_node = 0;  // 0 on one node: every rank of the session
  // Nodes sharing this host (simulated nodes, SYNK_SIMULATE_NODES: their ranks share its cores).
  int nodes_on_host = 1;
  // The first of the host's devices this node's ranks use: 0 on a node of its own; simulated
  // nodes of one host take consecutive slices of its devices (node k: k x ranks_per_node on).
  int first_device = 0;
  // Starts the link on this node's control block (sized for every rank of the session, the
  // other nodes' too), in the launcher after it forked its node's ranks, before any barrier.
  std::function<std::unique_ptr<NodeLink>(ControlBlock&)> start_link;

  bool several() const { return nodes > 1; }
  int firstRank() const { return node * ranks_per_node; }
};

}  // namespace synk
