#include "synk/harness/plan/plan.h"

#include <algorithm>
#include <cstdlib>

#include "synk/harness/base/hash.h"

namespace synk::harness {
namespace {

bool isFloatingName(const std::string& dtype) {
  return dtype.rfind("float", 0) == 0 || dtype == "bfloat16";
}

// "no GPU here: no NVIDIA GPU found": the note's first clause (the full note is long, and
// repeated on every point it would crowd the table).
std::string noGpu(const MachineLimits& m) {
  const std::string first = m.gpu_note.substr(0, m.gpu_note.find(':'));
  return "no GPU here" + (first.empty() ? "" : ": " + first);
}

bool hasAllReduce(const Experiment& e) {
  return std::any_of(e.step.begin(), e.step.end(),
                     [](const StepAction& a) { return a.kind == StepAction::Kind::AllReduce; });
}

template <typename T>
const std::vector<T>& valuesFor(const std::map<std::string, std::vector<T>>& specific,
                                const std::vector<T>& general, const std::string& backend) {
  const auto found = specific.find(backend);
  return found == specific.end() ? general : found->second;
}

// What identifies the measurement apart from the axis values (which come from point.axes).
std::string experimentIdentity(const Experiment& e) {
  if (e.kind == ExperimentKind::Collectives) {
    return std::string("collectives\nblocking=") + (e.blocking ? "1" : "0") +
           "\ntiming=" + timingName(e.timing) + "\n";
  }
  std::string id = "train\nname=" + e.name +
                   "\nplugin=" + e.plugin.substr(e.plugin.rfind('/') + 1) +
                   "\nstep=" + e.stepText() + "\nscaling=" + scalingName(e.scaling) + "\n";
  // Another launcher (or the same one told otherwise) may place and connect nodes differently.
  if (!e.launch.empty()) id += "launch=" + e.launch + "\n";
  for (const auto& [option, value] : e.model)
    id += "model." + option + "=" + value + "\n";
  const std::string canonical = e.canonical();
  // Inputs change what a step computes: their resolved description is part of the identity.
  for (size_t at = 0; (at = canonical.find("input.", at)) != std::string::npos;) {
    const size_t end = canonical.find('\n', at);
    id += canonical.substr(at, end - at + 1);
    at = end;
  }
  return id;
}

void finishPoint(Point& p, const std::string& identity, const std::string& machine_key) {
  std::string text = identity + "machine=" + machine_key + "\n";
  for (const auto& [name, value] : p.axes)
    text += name + "=" + value + "\n";
  p.key = hashHex(text);
}

void trainPoints(const Experiment& e, const MachineLimits& m, std::vector<Point>& out) {
  // The model axes' cartesian product, as a list of option maps.
  std::vector<std::map<std::string, std::string>> models{{}};
  for (const auto& [option, values] : e.axes.model) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& partial : models) {
      for (const std::string& v : values) {
        next.push_back(partial);
        next.back()[option] = v;
      }
    }
    models = std::move(next);
  }
  for (const std::string& backend : e.axes.backend) {
    std::vector<std::string> collectives{"shm"};
    if (!hasAllReduce(e)) {
      collectives = {"plugin"};
    } else if (backend == "cuda") {
      collectives = e.axes.collectives;
    }
    for (const std::string& coll : collectives) {
      for (const auto& model_axes : models) {
        for (int64_t batch : valuesFor(e.axes.batch_for, e.axes.batch, backend)) {
          // Without a launch line one "node", the sweeping machine, whose ranks are the axis's.
          const std::vector<int64_t> node_counts =
              e.launch.empty() ? std::vector<int64_t>{0} : e.axes.nodes;
          for (int64_t nodes : node_counts) {
            for (int64_t per_node : valuesFor(e.axes.ranks_for, e.axes.ranks, backend)) {
              const int64_t ranks = std::max<int64_t>(nodes, 1) * per_node;
              Point p;
              p.backend = backend;
              p.ranks = static_cast<int>(ranks);
              if (nodes > 0) {
                p.nodes = static_cast<int>(nodes);
                p.ranks_per_node = static_cast<int>(per_node);
                p.axes["nodes"] = std::to_string(nodes);
                p.axes["ranks_per_node"] = std::to_string(per_node);
              }
              p.batch = batch;
              p.rows = e.scaling == Scaling::Weak ? batch * ranks : batch;
              p.collectives = coll;
              p.model = e.model;
              for (const auto& [option, value] : model_axes) {
                p.model[option] = value;
                p.axes["model." + option] = value;
              }
              p.axes["backend"] = backend;
              p.axes["ranks"] = std::to_string(ranks);
              p.axes["batch"] = std::to_string(batch);
              if (coll != "plugin") p.axes["collectives"] = coll;
              // A launched point's nodes are other machines, whose GPUs fork() judges there;
              // simulated nodes (SYNK_SIMULATE_NODES) share this host's, split between them.
              const bool simulated = e.launch.find("SYNK_SIMULATE_NODES") != std::string::npos ||
                                     std::getenv("SYNK_SIMULATE_NODES") != nullptr;
              const bool elsewhere = nodes > 0 && !simulated;
              if (backend == "cuda" && !elsewhere && m.gpus == 0) {
                p.reason = noGpu(m);
              } else if (backend == "cuda" && !elsewhere && ranks > m.gpus) {
                p.reason = "needs " + std::to_string(ranks) + " GPUs, this machine has " +
                           std::to_string(m.gpus);
              } else if (backend == "cpu" && per_node > m.cpus && !e.oversubscribe) {
                // Per node: a launched point's nodes are other machines (as many threads each).
                p.reason = std::to_string(per_node) + " CPU ranks on " + std::to_string(m.cpus) +
                           " hardware threads (set experiment.oversubscribe = true to run it)";
              } else if (e.scaling == Scaling::Strong && batch < ranks) {
                p.reason = "a global batch of " + std::to_string(batch) +
                           " rows leaves a rank of " + std::to_string(ranks) + " without rows";
              }
              p.skipped = !p.reason.empty();
              p.job = static_cast<int>(out.size());
              out.push_back(std::move(p));
            }
          }
        }
      }
    }
  }
}

std::string collectiveSkip(const Point& p, const Experiment& e, const MachineLimits& m) {
  if (p.backend != "cpu" && m.gpus == 0) {
    return noGpu(m);
  }
  if (p.backend == "nccl" && p.ranks > m.gpus) {
    return "NCCL needs one GPU per rank: " + std::to_string(p.ranks) + " ranks, " +
           std::to_string(m.gpus) + " GPU(s) here (the host backend can share GPUs)";
  }
  if (p.backend == "cpu" && p.ranks > m.cpus && !e.oversubscribe) {
    return std::to_string(p.ranks) + " CPU ranks on " + std::to_string(m.cpus) +
           " hardware threads (set experiment.oversubscribe = true to run it)";
  }
  if (p.root >= p.ranks) {
    return "root " + std::to_string(p.root) + " is not a rank of " + std::to_string(p.ranks);
  }
  if (p.redop == "avg" && !isFloatingName(p.dtype)) return "avg needs a floating-point dtype";
  return {};
}

// nccl-tests' two column groups: all_reduce, broadcast and reduce out of place then in place;
// the gathers and scatter have the out-of-place form only (synk's communicators take separate
// send and receive buffers for them).
std::vector<Placement> placementsOf(Collective op) {
  if (op == Collective::AllReduce || op == Collective::Broadcast || op == Collective::Reduce) {
    return {Placement::OutOfPlace, Placement::InPlace};
  }
  return {Placement::OutOfPlace};
}

void collectivePoints(const Experiment& e, const MachineLimits& m, std::vector<Point>& out) {
  int job = 0;
  for (const std::string& backend : e.axes.backend) {
    for (int64_t ranks : e.axes.ranks) {
      for (Collective op : e.axes.op) {
        for (const std::string& dtype : e.axes.dtype) {
          const std::vector<std::string> redops =
              reduces(op) ? e.axes.redop : std::vector<std::string>{"none"};
          const std::vector<int64_t> roots = hasRoot(op) ? e.axes.root : std::vector<int64_t>{-1};
          for (const std::string& redop : redops) {
            for (int64_t root : roots) {
              for (int64_t bytes : e.axes.bytes) {
                for (Placement placement : placementsOf(op)) {
                  Point p;
                  p.job = job;
                  p.backend = backend;
                  p.ranks = static_cast<int>(ranks);
                  p.op = op;
                  p.dtype = dtype;
                  p.redop = redop;
                  p.root = static_cast<int>(root);
                  p.bytes = bytes;
                  p.placement = placement;
                  p.axes = {{"backend", backend},
                            {"ranks", std::to_string(ranks)},
                            {"op", toString(op)},
                            {"dtype", dtype},
                            {"redop", redop},
                            {"root", std::to_string(root)},
                            {"bytes", std::to_string(bytes)},
                            {"placement", placementName(placement)}};
                  p.reason = collectiveSkip(p, e, m);
                  p.skipped = !p.reason.empty();
                  out.push_back(std::move(p));
                }
              }
            }
          }
        }
      }
      ++job;
    }
  }
}

}  // namespace

const char* placementName(Placement placement) {
  return placement == Placement::InPlace ? "in" : "out";
}

bool hasRoot(Collective op) {
  return op == Collective::Broadcast || op == Collective::Reduce || op == Collective::Gather ||
         op == Collective::Scatter;
}

bool reduces(Collective op) {
  return op == Collective::AllReduce || op == Collective::Reduce;
}

std::string Point::label() const {
  std::string out = backend;
  for (const auto& [name, value] : axes) {
    if (name != "backend") out += " " + name + "=" + value;
  }
  return out;
}

int Plan::runnable() const {
  return static_cast<int>(
      std::count_if(points.begin(), points.end(), [](const Point& p) { return !p.skipped; }));
}

Plan makePlan(const Experiment& experiment, const MachineLimits& machine,
              const std::string& machine_key) {
  Plan plan;
  if (experiment.kind == ExperimentKind::Train) {
    trainPoints(experiment, machine, plan.points);
  } else {
    collectivePoints(experiment, machine, plan.points);
  }
  const std::string identity = experimentIdentity(experiment);
  for (size_t i = 0; i < plan.points.size(); ++i) {
    Point& p = plan.points[i];
    p.index = static_cast<int>(i);
    finishPoint(p, identity, machine_key);
    plan.jobs = std::max(plan.jobs, p.job + 1);
  }
  return plan;
}

}  // namespace synk::harness
