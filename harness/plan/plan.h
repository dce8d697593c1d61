#pragma once
// Stage 2: an Experiment's axes -> the points of a run, in the order they run. A point that
// cannot run on this machine (more ranks than GPUs, no GPU at all, a root outside the ranks) is
// kept as skipped with its reason, so a report says what was not measured and why.
//
// The cartesian product of the axes is taken per backend ([axes.cpu] ranks may differ from
// [axes] ranks). Axes that do not apply are collapsed rather than multiplied: the cpu backend
// has one kind of collectives (shm); a train step without an all_reduce action leaves the
// collectives to the plugin; redop applies to reductions and root to rooted collectives only.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synk/harness/config/config.h"

namespace synk::harness {

// What this machine can run, found without initialising CUDA (context.h).
struct MachineLimits {
  int cpus = 1;          // hardware threads this process may run on
  int gpus = 0;          // GPUs the cuda backend sees
  std::string gpu_note;  // why there are none, when gpus == 0
};

// Out-of-place and in-place variants of a collective, like nccl-tests' two column groups.
enum class Placement { OutOfPlace, InPlace };
const char* placementName(Placement placement);  // "out", "in"

struct Point {
  int index = 0;  // position in the plan
  int job = 0;    // points of one job share a process (and a session) per repetition
  // Every axis value, by name, as stored and shown ("ranks" -> "2", "model.precision" -> "bf16").
  std::map<std::string, std::string> axes;
  int ranks = 1;        // the session's: nodes x ranks_per_node where the point is launched
  std::string backend;  // train: cpu | cuda; collectives: cpu | host | nccl
  // Launched points (experiment.launch): the nodes the launcher starts (one synk-bench process
  // each) and the ranks each forks. 0 and 0: a fork of the sweeping process on this machine.
  int nodes = 0;
  int ranks_per_node = 0;

  // train
  int64_t batch = 0;        // the batch axis value: per rank (weak scaling) or global (strong)
  int64_t rows = 0;         // rows one step scatters over the ranks
  std::string collectives;  // nccl | host | shm (cpu) | plugin (the step has no all_reduce)
  std::map<std::string, std::string> model;  // model options with the model axes applied

  // collectives
  Collective op = Collective::AllReduce;
  std::string dtype, redop;  // redop "none" for ops that do not reduce
  int root = -1;             // -1 for ops without a root
  int64_t bytes = 0;
  Placement placement = Placement::OutOfPlace;

  bool skipped = false;
  std::string reason;  // why it was skipped
  // Comparability key: points with equal keys measured the same thing on the same kind of
  // machine (experiment, plugin, step, options, inputs, axis values, machine key).
  std::string key;

  // "cpu ranks=2 batch=64" for progress lines and messages.
  std::string label() const;
};

struct Plan {
  std::vector<Point> points;
  int jobs = 0;
  int runnable() const;
};

// machine_key (context.h) identifies the kind of machine; it is part of every point's key.
Plan makePlan(const Experiment& experiment, const MachineLimits& machine,
              const std::string& machine_key);

// Whether `op` has a root (broadcast, reduce, gather, scatter) / reduces (all_reduce, reduce).
bool hasRoot(Collective op);
bool reduces(Collective op);

}  // namespace synk::harness
