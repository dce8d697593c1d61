// Sees another node's launcher process end at once, however it ends (SIGKILL included), where
// nothing else would say so: its node's ranks end with it, its bridge sends no abort note, and
// MPI tells the survivors nothing (cluster/README.md, "Failures").
//
// Every node's launcher holds a TCP connection to node 0's (the master's process); the kernel
// closes a process's sockets when it ends, so its peer reads the end of the stream within
// milliseconds. A launcher that leaves on purpose says so first on that connection: 'q' when its
// session ended normally, or its abort (reason, rank, message) when it was aborted — the same
// record its bridge sends through MPI, so whichever arrives first is applied and the other finds
// the session aborted already. An end without either is a death: node 0 aborts its session
// naming that node's launcher and ranks (the master raises PeerFailure), another node aborts its
// own naming the master's process (its ranks leave, its launcher ends).
//
// The connections are made collectively when the bridge starts, on its thread (the only one
// calling MPI): node 0 listens on a port of its own choosing and broadcasts its host name and
// addresses; the other nodes connect (bounded) and say who they are. If any node cannot connect
// (a firewall between the nodes), every node logs why and runs without the watch: a launcher's
// death is then seen at the step's deadline, as before. SYNK_LAUNCHER_WATCH=0 turns it off.
// Node 0 broadcasts a random token with its address: a connection that does not echo it (another
// job's launcher on a shared host) is refused, and a node tries node 0's next address until it
// is welcomed. Known limit: a process the launcher forks without exec after synk::fork() (its
// own children) inherits the connections, so its launcher's death shows only when they end too.
//
// A launcher that stops without ending (SIGSTOP, a debugger, a hung machine) closes nothing. So
// every watch sends a heartbeat byte on each connection every beat (a quarter of the silence
// bound, at most a second), and a peer that sends nothing for the silence bound
// (SYNK_LAUNCHER_SILENCE on node 0, seconds, at least 3; default 30; 0: none; node 0 hands it to
// every node with its address, so beats and bounds agree) is reported as stopped or hung: node 0
// aborts its session with a Timeout naming that node's launcher and ranks, another node aborts
// its own when the master's process is the silent one. Without it such a node was seen only at
// the step's deadline (10 minutes by default), and never while the session was idle.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "synk/cluster/launch_env.h"
#include "synk/core/control_block.h"

namespace synk::cluster {

class LauncherWatch {
 public:
  // Collective over every node's launcher (see above), on the thread that calls MPI. Returns
  // nullptr, after a warning, when the watch is off or could not be set up on some node.
  // What the setup needs of MPI (the bridge's thread gives it, MPI kept out of this header):
  // node 0's bytes into every node's, and whether every node says yes.
  struct Agreement {
    std::function<void(void* bytes, size_t size)> broadcast_from_node0;
    std::function<bool(bool mine)> all;
  };
  static std::unique_ptr<LauncherWatch> start(ControlBlock& cb, const NodeLayout& layout,
                                              const Agreement& mpi);

  struct Peer {
    int node;
    int fd;  // a connected stream socket, owned by the watch from here on
    int pid;
    std::string host;
  };
  // The watch over connections already made (what start() does once connected; the tests give
  // it socket pairs). `silence`: the bound above (0: none).
  static std::unique_ptr<LauncherWatch> over(ControlBlock& cb, const NodeLayout& layout,
                                             std::vector<Peer> peers,
                                             std::chrono::milliseconds silence = kDefaultSilence);
  static constexpr std::chrono::milliseconds kDefaultSilence{30000};
  static constexpr std::chrono::milliseconds kMinSilence{3000};
  // SYNK_LAUNCHER_SILENCE in seconds (fractions allowed), else kDefaultSilence; a value that is
  // not a number >= 0 is warned about, naming it, and the default kept; one above 0 but below
  // kMinSilence is warned about and raised to it. Node 0 reads it; every node uses node 0's.
  static std::chrono::milliseconds silenceBound();
  ~LauncherWatch();  // leave()
  LauncherWatch(const LauncherWatch&) = delete;
  LauncherWatch& operator=(const LauncherWatch&) = delete;

  // Tells every peer this node leaves ('q', or the session's abort record), stops watching and
  // closes the connections. Call it once this node is done with the control block; idempotent.
  void leave() noexcept;

 private:
  LauncherWatch(ControlBlock& cb, const NodeLayout& layout, std::vector<Peer> peers,
                std::chrono::milliseconds silence);
  void watch();
  void peerEnded(const Peer& peer);
  // `peer` sent nothing, not even a heartbeat, for `silent`.
  void peerSilent(const Peer& peer, std::chrono::milliseconds silent);
  // Aborts this node's session for what `peer` did (`how`): naming the master's process, or node
  // k's launcher and what became of its ranks (`its_ranks`).
  void abortFor(const Peer& peer, AbortReason reason, const std::string& how,
                const char* its_ranks);

  ControlBlock& cb_;
  NodeLayout layout_;
  std::vector<Peer> peers_;
  std::chrono::milliseconds silence_;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> left_{false};
  std::thread thread_;
};

}  // namespace synk::cluster
