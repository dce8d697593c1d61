#pragma once
// synk-bench's point-running mode over several nodes: what the launcher (experiment.launch)
// starts once per node, as the hidden command `synk-bench node-point ARGS`. Every node's process
// prints its node line, then calls synk::fork() for one repetition of the point (cluster/
// README.md: it forks its node's ranks; on node 0 fork() returns the master, elsewhere it never
// returns). Node 0 writes the repetition's JobOutcome (outcome.h) to a file, which the sweeping
// process reads once the launcher has ended (sweep/launched_point.h).
//
// Everything a node needs travels in its arguments (the experiment's text, hex-encoded, its
// overrides, the point's index and the resolved plugin), so no node reads a file of the
// sweeping host; only node 0's report does: the sweeping process must see the folder it is
// written to (the same host, or a shared file system).
#include <cstdint>
#include <string>
#include <vector>

namespace synk::harness {

struct NodePointArgs {
  std::string experiment_text;  // the experiment file's text, as the run stored it
  std::string origin;           // where it was read from (for messages)
  std::vector<std::string> overrides;
  int point = 0;  // Point::index in the plan
  int repetition = 0;
  std::string plugin;   // resolved by the sweeping process (resolvePlugin)
  std::string outcome;  // the file node 0 writes its report to (whole, or not at all)

  std::vector<std::string> toArgs() const;
  // Throws BadInput naming the argument.
  static NodePointArgs parse(const std::vector<std::string>& args);
};

// Runs one repetition on this node; returns the process's exit code (0: node 0 wrote its report,
// or a node that is not node 0 ended its session; 1: this node could not take part).
int runNodePoint(const NodePointArgs& args);

// What every node prints first (one write): "synk-bench-node: NODE PID HOST", and writes to
// REPORT.node-NODE where it can (node 0's folder, on the sweep's host). The sweeping process
// reads them from the launcher's output and those files: the hosts of a point, and the
// processes of its host to clean up after if the launcher was killed.
struct NodeLine {
  int node = 0;
  int64_t pid = 0;
  std::string host;
};
std::string nodeLineText(const NodeLine& line);
// This machine's name as node lines give it (gethostname).
std::string hostName();

// How a launcher started this process when it started several ("open-mpi process 0 of 2"), else
// "": synk-bench sweeps once and launches nodes itself (experiment.launch); a sweep run under
// mpirun or srun would run every point once per process, each a session over the nodes.
std::string startedAsOneOfSeveral();
// Every node line in `output`, by node; a node printed twice keeps its first.
std::vector<NodeLine> parseNodeLines(const std::string& output);

}  // namespace synk::harness
