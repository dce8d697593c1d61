#pragma once
// A session over several nodes (cluster/README.md): one launcher process per node (mpirun,
// srun), each forking its node's ranks; ranks numbered node-major, the master (global rank
// `ForkOptions::master_rank`) on node 0. core knows nodes only through this: which ranks live
// here, and the link that carries the session's barriers to the other nodes (cluster/'s
// NodeBridge), which core starts in the launcher right after the fork and ends at shutdown.
// One node (the default) is one machine, exactly as without it.
#include <functional>
#include <memory>

#include "synk/core/control_block.h"

namespace synk {

class Communicator;

class NodeLink {
 public:
  // Destroying it ends the link (and joins what it runs, unless that may be inside MPI for good:
  // then it is left to the process's end, told not to touch the control block again).
  virtual ~NodeLink() = default;
  // Asks it to end after the barrier in flight (the node's ranks are done).
  virtual void stop() = 0;
  // The collectives across nodes of this process's rank, on host memory (the cpu backend's),
  // where each node has one rank (NodeSpan::ranks_per_node == 1).
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
