// The control plane between node leaders (README, "Next", step 1): the launcher processes, one
// per node, talking through Open MPI after each has forked its node's ranks. MPI is initialised
// after the fork, and never in a forked rank (Open MPI's advice on fork).
//
// Every wait has a deadline. MPI's blocking collectives are its fast ones (its non-blocking
// all-reduce ran at half MPI_Allreduce's rate here), and they cannot time out, so the link runs
// them on a thread of its own — the one that initialised MPI, and the only one that calls it
// (MPI_THREAD_FUNNELED) — and the caller waits for each with a deadline. MPI cannot say which
// node is late: a Timeout names the operation and this node. After one the MPI thread may be
// stuck inside MPI for good, so the link is unusable and the job must end, as a session ends
// after a PeerFailure on one machine (the destructor then leaves the thread to the process's end).
//
// Built where MPI is found (target synk_cluster_mpi); without MPI nothing here exists and one
// machine works as before.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "synk/cluster/launch_env.h"
#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk::cluster {

class LeaderLink {
 public:
  // Starts the MPI thread, initialises MPI there and checks the launch against `layout`: MPI's
  // world must hold layout.nodes processes and this one must be node layout.node, else
  // InvalidArgument naming both and what to change; an MPI library without MPI_THREAD_FUNNELED
  // is refused naming what it gives. `timeout` bounds every operation; starting MPI, which on a
  // loaded host takes longer than a short operation's deadline, at least kStartBound.
  static constexpr std::chrono::milliseconds kStartBound{std::chrono::seconds(60)};
  LeaderLink(const NodeLayout& layout, std::chrono::milliseconds timeout);
  ~LeaderLink();  // MPI_Finalize on the MPI thread, which then ends (not after a timeout)
  LeaderLink(const LeaderLink&) = delete;
  LeaderLink& operator=(const LeaderLink&) = delete;

  int node() const { return layout_.node; }
  int nodes() const { return layout_.nodes; }

  // Every leader has arrived.
  void barrier(const std::string& what);
  // `bytes` of node `root`'s leader on every leader (its size travels first: the others' are
  // resized to it), e.g. NCCL's unique id from node 0.
  void broadcast(std::vector<std::byte>& bytes, int root, const std::string& what);
  // data = op over the nodes' `data` (count elements of dtype), combined in node order with
  // core's host kernels as one machine's shared-memory reduction combines its ranks: node 0's
  // array, then node 1's, ...; avg is that sum times 1/nodes, as there. The same bits on every
  // leader. Two nodes, where one operation per element is order-free (sum and prod of float32 and
  // float64, every op of the integer dtypes): MPI's own all-reduce. Otherwise each node combines
  // one slice in node order between an all-to-all and an all-gather (MPI's all-reduce may group
  // the operations its own way, and has no float16/bfloat16). Refuses (InvalidArgument naming
  // both) an op and dtype core's collectives refuse: gather, none, avg of an integer dtype.
  void allReduce(void* data, size_t count, DType dtype, ReduceOp op, const std::string& what);

  // Runs `work`, which may call MPI, on the MPI thread and waits for it until the deadline
  // (Timeout naming `what`); an exception `work` throws is rethrown here. Every other method
  // goes through it; no other thread may call MPI.
  // `bound`: how long to wait (0: the link's timeout).
  void onMpiThread(const std::string& what, std::function<void()> work,
                   std::chrono::milliseconds bound = std::chrono::milliseconds(0));

 private:
  // Joins the MPI thread, or after a timeout leaves it (and its state) to the process's end.
  void endThread();

  struct Thread;
  NodeLayout layout_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Thread> thread_;
  bool timed_out_ = false;
};

}  // namespace synk::cluster
