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
#pragma once
#include <mpi.h>

#include <atomic>
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
  static std::unique_ptr<LauncherWatch> start(ControlBlock& cb, const NodeLayout& layout,
                                              MPI_Comm comm);
  ~LauncherWatch();  // leave()
  LauncherWatch(const LauncherWatch&) = delete;
  LauncherWatch& operator=(const LauncherWatch&) = delete;

  // Tells every peer this node leaves ('q', or the session's abort record), stops watching and
  // closes the connections. Call it once this node is done with the control block; idempotent.
  void leave() noexcept;

  struct Peer {
    int node;
    int fd;
    int pid;
    std::string host;
  };

 private:
  LauncherWatch(ControlBlock& cb, const NodeLayout& layout, std::vector<Peer> peers);
  void watch();
  // A peer's connection ended or said something: false once it is done with.
  bool read(Peer& peer);
  void peerEnded(const Peer& peer);

  ControlBlock& cb_;
  NodeLayout layout_;
  std::vector<Peer> peers_;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> left_{false};
  std::thread thread_;
};

}  // namespace synk::cluster
