// One session's control plane over several nodes (README, "Built: the node bridge"): the barrier
// every step of synk passes, across nodes.
//
// Each node holds a control block (core/process/control/control_block.h) with a slot for every
// rank of the session, not only its own. The node's ranks arrive at barriers as on one machine;
// the node's bridge, a thread of its launcher process, makes the other nodes' ranks arrive: once
// every rank of this node has reached barrier e, it sends what they published for it (ok flag,
// site, the bytes of their exchange areas Barrier::outbox counted, status, shape generation, a
// failure's message; and, from the master's node at a command's start, the command) to every
// other node, and applies each other node's packet as it comes: the fields into the slots of that
// node's ranks, then their arrival at e. Barrier, exchange(), the step runner and their deadlines
// run unchanged: the ranks of a node whose packet has not come are missing from this node's slots
// and are named by their global ranks when a waiting rank's deadline passes (a node's ranks
// travel together: one late rank makes its whole node late).
//
// An abort travels too: when this node's session is aborted (a rank timed out, died, failed, or
// the session closed) the bridge sends the reason, the rank and the message to every other
// node, whose bridge aborts its own session with them, so every rank everywhere stops waiting.
// A launcher that dies sends nothing: the bridge starts the launcher watch (launcher_watch.h),
// whose connections say so at once, and ends it (leave) when its node is done.
//
// Only the bridge's thread calls MPI (it initialises it, after the node's ranks forked: Open
// MPI's advice on fork). It polls: MPI makes progress only when called. It spins `spin`, then
// sleeps 50 us between polls for 10 ms, then 1 ms: a first command after a long idle pays up to a
// millisecond, a loop of steps none.
//
// It also runs its process's rank's work that calls MPI (onMpiThread: the node leaders' data
// operations, leader_communicator.h, for any number of ranks per node) between barriers. Not
// carried: step times, a command too large for the control block (the step runner ships its blob
// to every node in a step before it: core/step/step_runner.h).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "synk/cluster/launch_env.h"
#include "synk/core/control_block.h"
#include "synk/core/waiter.h"

namespace synk::cluster {

struct BridgeOptions {
  // How long the bridge polls without sleeping (for its node's ranks, for the other nodes).
  std::chrono::microseconds spin{200};
  // How many MPI_Barrier round trips to time when the bridge starts (0: none), the peer
  // NodeBridge::mpiBarrierMedian reports.
  int calibrate = 0;
};

class NodeBridge {
 public:
  // Starts the bridge's thread, which initialises MPI and checks the launch against `layout`
  // (detail::startMpi: refusals by name, rethrown here); `cb` is this node's control block,
  // sized for layout.worldRanks() ranks, whose slots of this node's ranks its ranks fill.
  NodeBridge(ControlBlock& cb, const NodeLayout& layout, BridgeOptions options = {});
  // stop(), then MPI_Finalize on the bridge's thread unless the session was aborted (another
  // node may never join MPI's end then: the job ends without it).
  ~NodeBridge();
  NodeBridge(const NodeBridge&) = delete;
  NodeBridge& operator=(const NodeBridge&) = delete;

  // Ends the thread at the next barrier it waits for. Call it when this node's ranks are done
  // (every node passed the last barrier, or the session was aborted).
  void stop();
  // stop(), then waits for the thread to end (MPI finished: the destructor does it too); after
  // it barriers() is final.
  void end();

  // Runs `work`, which may call MPI (a collective of every node's leader: each runs the same
  // work in the same order), on the bridge's thread between barriers, and waits for it with
  // `waiter`: its deadline (Timeout naming `what`; the bridge's thread may then be inside MPI for
  // good, so the link is unusable and the session must end), this node's abort and the peers'
  // liveness. While `work` blocks in MPI the bridge reads no packet and no abort note of another
  // node: a node that fails instead of joining it is seen at the waiter's deadline. `work` must
  // touch only data it owns (it may outlive the wait). An exception it throws is rethrown here.
  void onMpiThread(const std::string& what, std::function<void()> work, Waiter& waiter);
  // The same, calling `meanwhile` on this thread between its polls while `work` runs (the
  // caller's share of a pipelined job, chunk_pipeline.h: true when it did something, then the
  // wait polls again at once). It runs on the caller's thread only while the caller waits: what
  // it writes is the caller's to write.
  void onMpiThread(const std::string& what, std::function<void()> work, Waiter& waiter,
                   const std::function<bool()>& meanwhile);

  // Barriers bridged so far (all of them once end() returned).
  uint64_t barriers() const;
  // The median of BridgeOptions::calibrate MPI_Barrier round trips between the node leaders.
  std::chrono::nanoseconds mpiBarrierMedian() const;

 private:
  struct Thread;
  std::unique_ptr<Thread> thread_;
  uint64_t final_barriers_ = 0;  // barriers() once the thread ended
};

}  // namespace synk::cluster
