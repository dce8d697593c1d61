#pragma once
// Stage 1 of a run: an experiment file plus command-line overrides -> a typed Experiment.
//
// Files are INI, read with Boost.Program_options' config-file parser. Sections and keys:
//
//   [experiment]  name, description, kind (train | collectives), repetitions, warmup,
//                 warmup_time, steps, min_time, max_steps, timeout, repetition_timeout, seed,
//                 oversubscribe, scaling (weak | strong), gpu_telemetry (used | all |
//                 none: whose clocks, power and energy NVML records)                 (both kinds)
//                 step_times (true | false: each rank's time per step by phase)   (train)
//                 plugin, function | step, check                                 (train)
//                 check, blocking, timing (batch | iteration)                    (collectives)
//                 launch: the launcher's line that runs each point over {nodes} nodes
//                 (launch_line.h), with axes.nodes; axes.ranks then counts ranks per node (train)
//   [model]       any key: a model option passed to Session::load (plugin-defined)
//   [input.NAME]  shape (dims or `batch`), dtype, range (lo:hi), broadcast,      (train)
//                 resident (cuda: kept in the GPUs' memory, not copied every step)
//   [axes]        ranks, backend, batch, collectives, model.OPTION, precision,   (train)
//                 nodes (with experiment.launch)
//                 ranks, backend, op, bytes, dtype, redop, root                  (collectives)
//   [axes.BACKEND] ranks, batch: that backend's own values (e.g. [axes.cpu] ranks = 1,2)
//   [compare]     min_change, noise_factor, q, min_repetitions: the regression rule's thresholds
//                 for this experiment (significance.h; `synk-bench compare` reads the baseline's)
//
// Every key may be overridden from the command line: --set axes.ranks=1,2 (a key given in both
// takes the command line's value). Errors are BadInput naming the file and line (or the --set),
// the key, and for an unknown key the valid ones.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/config/config_file.h"
#include "synk/harness/config/launch_line.h"
#include "synk/harness/records/collective.h"

namespace synk::harness {

enum class ExperimentKind { Train, Collectives };
enum class Scaling { Weak, Strong };
// How a collectives point is timed. Batch (nccl-tests' method): n iterations back to back, one
// synchronisation, the mean per iteration; each rank stores one sample per repetition. Iteration:
// every iteration synchronised and timed alone, one sample each (a distribution, slower ops).
enum class CollectiveTiming { Batch, Iteration };

// One dimension of a synthetic input: a number, or the symbol `batch` (the rows one call
// scatters: ranks x per-rank batch in weak scaling, the batch itself in strong scaling).
struct Dim {
  bool is_batch = false;
  int64_t value = 0;
};

// A synthetic input of the step's functions, generated once per repetition from the seed.
struct InputSpec {
  std::string name;
  std::vector<Dim> shape;  // empty: a scalar
  std::string dtype;       // empty: the dtype the plugin declares
  // Values are drawn uniformly from [low, high] (integers: every integer in it).
  std::optional<std::pair<double, double>> range;
  bool broadcast = false;  // every rank gets the whole input (else scattered along axis 0)
  // cuda: the input stays in every rank's GPU memory (DataOptions::device_resident), a training
  // set placed there once, instead of its rows being copied from shared memory every step.
  bool resident = false;
};

// One action of a step: call a function, or all-reduce (average) a shared variable through the
// point's collectives (nccl or host-staged): "grad, all_reduce(grad), update".
struct StepAction {
  enum class Kind { Call, AllReduce } kind = Kind::Call;
  std::string name;
};

struct Axes {
  std::vector<int64_t> ranks{1};  // with experiment.launch: ranks per node
  std::vector<std::string> backend{"cpu"};
  std::vector<int64_t> nodes{1};  // with experiment.launch: the nodes a point spans
  // train
  std::vector<int64_t> batch{64};
  std::vector<std::string> collectives{"nccl"};
  std::map<std::string, std::vector<std::string>> model;  // model option -> values
  // per backend: its own ranks / batch values
  std::map<std::string, std::vector<int64_t>> ranks_for, batch_for;
  // collectives
  std::vector<Collective> op{Collective::AllReduce};  // parsed once here (records/collective.h)
  std::vector<int64_t> bytes{8};
  std::vector<std::string> dtype{"float32"};
  std::vector<std::string> redop{"sum"};
  std::vector<int64_t> root{0};
};

// The regression rule's thresholds (significance.h's RegressionThresholds, whose defaults these
// are): a point regresses when significant at q and worse by more than
// max(min_change, noise_factor x the baseline's noise); fewer than min_repetitions a side cannot
// reach significance.
struct CompareSettings {
  double min_change = 0.05;
  double noise_factor = 2.0;
  double q = 0.05;
  int min_repetitions = 5;
};

struct Experiment {
  std::string name;
  std::string description;
  ExperimentKind kind = ExperimentKind::Train;
  std::string file;                    // where it was read from ("" for one built from flags)
  std::string text;                    // the file's full text, stored with the run
  std::vector<std::string> overrides;  // the --set arguments, in order
  // Where each key given was set ("quickstart.ini:7", "--set model.lr=0.5", "--op all_scatter"):
  // later checks (the plugin, its model options) name it in their messages.
  std::map<std::string, std::string> origin;

  // measurement
  int repetitions = 5;
  int warmup = 5;
  double warmup_time = 0;            // seconds; warm-up lasts at least `warmup` steps and this long
  int steps = 20;                    // timed steps: at least this many ...
  double min_time = 0;               // ... and at least this many seconds ...
  int max_steps = 1000000;           // ... but never more than this
  double timeout = 600;              // seconds: the deadline of every wait inside a step
  double repetition_timeout = 3600;  // seconds: a repetition still running then is killed
  uint64_t seed = 1;
  bool oversubscribe = false;  // run CPU points with more ranks than hardware threads
  // Which GPUs' telemetry (NVML) each repetition records: used (the point's), all, none.
  std::string gpu_telemetry = "used";
  // Train: every rank's time in every timed step by phase (Session::lastStepTimes): its work,
  // the device's, the runtime's path, waiting for the others. On by default.
  bool step_times = true;
  Scaling scaling = Scaling::Weak;

  // train
  std::string plugin;  // a name (lib<name>.so next to the executable's lib/) or a path
  std::vector<StepAction> step;
  std::map<std::string, std::string> model;  // model options (before the model axes)
  std::vector<InputSpec> inputs;
  std::vector<std::string> check{"all"};  // variables compared across ranks: all | none | names
  // How a point is started over axes.nodes nodes (launch_line.h): "" = every repetition is a
  // fork of synk-bench on this machine; else the launcher starts synk-bench's point-running
  // mode once per node and node 0's reports back (sweep/launched_point.h).
  std::string launch;

  // collectives
  int check_iterations = 1;  // nccl-tests' -c
  bool blocking = false;     // nccl-tests' -z: synchronise after every iteration
  CollectiveTiming timing = CollectiveTiming::Batch;

  Axes axes;
  CompareSettings compare;

  // Every effective setting, defaults included, one "key = value" per line in key order: what a
  // run stores as its resolved configuration and what comparability keys are built from.
  std::string canonical() const;
  // "grad, all_reduce(grad), update"
  std::string stepText() const;
};

// Reads `path` and applies `overrides` ("key=value" each).
Experiment loadExperiment(const std::string& path, const std::vector<std::string>& overrides = {});
// The same from text already in memory (`origin` names it in messages). `flags` are entries a
// command line set (`synk-bench collectives -n 20`), each naming its flag: applied over the text
// and under the overrides.
Experiment parseExperiment(const std::string& text, const std::string& origin,
                           const std::vector<std::string>& overrides = {},
                           const std::map<std::string, ConfigEntry>& flags = {});

// "experiments/quickstart.ini:7: experiment.plugin = 'nope'": where a key was set and its value,
// for messages about it; the experiment's file when the key was not given.
std::string describeSetting(const Experiment& experiment, const std::string& key,
                            const std::string& value);

const char* kindName(ExperimentKind kind);
const char* scalingName(Scaling scaling);
const char* timingName(CollectiveTiming timing);  // "batch", "iteration"

// The names a train experiment accepts per axis (for messages and the CLI's help).
extern const std::vector<std::string> kBackends;            // cpu, cuda
extern const std::vector<std::string> kTrainCollectives;    // nccl, host
extern const std::vector<std::string> kCollectiveBackends;  // cpu, host, nccl
extern const std::vector<std::string> kCollectiveOps;       // all_reduce, broadcast, reduce, ...
extern const std::vector<std::string> kDTypes;              // float32, float64, ...
extern const std::vector<std::string> kRedops;              // sum, prod, max, min, avg

}  // namespace synk::harness
