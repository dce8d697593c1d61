#pragma once
// One repetition of a launched point (experiment.launch): the sweeping process runs the launch
// line with the point's {nodes} and {ranks_per_node}, followed by this synk-bench's hidden
// `node-point` command (run/node_point.h), which the launcher starts once per node. Node 0's
// process writes the repetition's report to a file in a folder of the sweep (LaunchFolder);
// every node's process prints its node line (host, pid) to the launcher's output.
//
// The child discipline holds as for a forked repetition (child.h): the launcher runs in a
// process group of its own under the repetition's deadline; the first Ctrl-C reaches it as
// SIGTERM (mpirun and srun pass it on to their tasks, or end them: node 0's master finishes its
// step and closes), the second kills its group. Then every node process of this host that is still
// this repetition's is killed by its pid, and the shared memory named after it removed, so nothing
// is left behind however the launcher ended. A launcher that fails, or ends without a report, fails
// the point with the reason and the tail of its output; the sweep goes on.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "synk/harness/base/child.h"
#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/run/node_point.h"
#include "synk/harness/run/outcome.h"

namespace synk::harness {

// A folder for the launched repetitions' reports and output, created beside the database (a
// folder node 0 is likelier to share with this host than /tmp) and removed with this object.
class LaunchFolder {
 public:
  explicit LaunchFolder(const std::string& beside_file);
  ~LaunchFolder();
  LaunchFolder(const LaunchFolder&) = delete;
  LaunchFolder& operator=(const LaunchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct LaunchedRepetition {
  bool stopped = false;  // a hard stop killed the launcher
  std::string broken;    // why there is no usable report ("" when `outcome` is node 0's)
  JobOutcome outcome;
  std::vector<NodeLine> nodes;  // the node lines seen, by node
  std::string hosts;            // "host0,host1": the nodes' hosts in node order ("?" unseen)
};

LaunchedRepetition runLaunchedRepetition(const Experiment& experiment, const Point& point,
                                         int repetition, const std::string& plugin,
                                         const LaunchFolder& folder, const StopWord& stop,
                                         std::chrono::milliseconds deadline,
                                         const std::function<void()>& tick);

// This program's path, which the launcher runs on every node (the same path there).
std::string selfExecutable();

}  // namespace synk::harness
