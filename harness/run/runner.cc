#include "synk/harness/run/runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <optional>

#include "synk/harness/base/errors.h"
#include "synk/harness/run/gpu_telemetry.h"
#include "synk/harness/run/inputs.h"
#include "synk/synk.h"

namespace synk::harness {
namespace {

using Clock = std::chrono::steady_clock;
using Options = std::map<std::string, std::string>;

int64_t nanoseconds(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// The experiment's [model] section becomes the model's load options; the model refuses a key
// it does not declare, naming the valid ones.
Model loadModel(Session& session, const std::string& path, const Options& options) {
  return session.load(path, ModelOptions(options.begin(), options.end()));
}

const FunctionSpec& functionSpec(const Model& model, const std::string& name) {
  const ModelSpec& spec = model.spec();
  for (const FunctionSpec& f : spec.functions) {
    if (f.name == name) return f;
  }
  std::string names;
  for (const FunctionSpec& f : spec.functions)
    names += (names.empty() ? "" : ", ") + f.name;
  throw BadInput("model '" + spec.name + "' (" + model.source() + ") has no function '" + name +
                 "'; it has: " + names);
}

const VariableSpec& variableSpec(const Model& model, const std::string& name) {
  for (const VariableSpec& v : model.spec().variables) {
    if (v.name == name) return v;
  }
  std::string names;
  for (const VariableSpec& v : model.spec().variables)
    names += (names.empty() ? "" : ", ") + v.name;
  throw BadInput("model '" + model.spec().name + "' has no variable '" + name +
                 "'; it has: " + names);
}

// The variables the correctness check compares: rank-local ones legitimately differ.
std::vector<std::string> checkedVariables(const Experiment& e, const Model& model) {
  if (e.check == std::vector<std::string>{"none"}) return {};
  if (e.check == std::vector<std::string>{"all"}) {
    std::vector<std::string> names;
    for (const VariableSpec& v : model.spec().variables) {
      if (v.kind != VariableKind::RankLocal) names.push_back(v.name);
    }
    return names;
  }
  for (const std::string& name : e.check) {
    if (variableSpec(model, name).kind == VariableKind::RankLocal) {
      throw BadInput("experiment.check names '" + name +
                     "', a rank-local variable: its ranks' copies differ by design");
    }
  }
  return e.check;
}

// Everything a step needs, bound once per repetition.
struct Bound {
  struct Action {
    Function function;
    std::vector<Data> inputs;
    std::vector<Variable> variables;  // all_reduce: built once, not in every timed step
    bool call = true;
  };
  std::vector<Action> actions;
  std::vector<std::string> checked;
};

Bound bind(Session& session, const Model& model, const Experiment& e, const Point& point,
           uint64_t seed) {
  Bound bound;
  for (const StepAction& a : e.step) {
    Bound::Action action;
    if (a.kind == StepAction::Kind::Call) {
      const FunctionSpec& spec = functionSpec(model, a.name);
      action.function =
          session.function(model, a.name, {.broadcast = broadcastInputs(spec, e.inputs)});
      std::vector<Array> arrays = makeInputs(spec, e.inputs, point.rows, seed);
      for (size_t i = 0; i < arrays.size(); ++i) {
        const bool resident = residentInput(e.inputs, spec.inputs[i].name);
        action.inputs.push_back(session.data(arrays[i], {.device_resident = resident}));
      }
    } else {
      variableSpec(model, a.name);
      action.variables = {model.variable(a.name)};
      action.call = false;
    }
    bound.actions.push_back(std::move(action));
  }
  bound.checked = checkedVariables(e, model);
  return bound;
}

// Ranks whose copy of each checked variable differs from the master's, summed over variables.
int64_t countWrong(Session& session, const Model& model, const std::vector<std::string>& names,
                   std::string& message) {
  int64_t wrong = 0;
  for (const std::string& name : names) {
    std::vector<Array> stacked;
    try {
      stacked = session.gather({model.variable(name)}, 1);
    } catch (const InvalidArgument& e) {  // shapes differ between ranks
      wrong += session.size() - 1;
      message += "variable '" + name + "': " + e.what() + "; ";
      continue;
    }
    const Array& all = stacked.front();
    const size_t each = all.bytes() / static_cast<size_t>(session.size());
    const auto* bytes = static_cast<const unsigned char*>(all.data());
    for (int r = 1; r < session.size(); ++r) {
      if (std::memcmp(bytes, bytes + each * static_cast<size_t>(r), each) != 0) {
        ++wrong;
        message += "variable '" + name + "' differs on rank " + std::to_string(r) + "; ";
      }
    }
  }
  return wrong;
}

ForkOptions forkOptions(const Experiment& e, const Point& point) {
  ForkOptions options;
  options.n_parallel = point.ranks;
  options.backend = point.backend;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(e.timeout * 1000));
  // A split step (calls and collectives, several runtime steps) is timed by its compute and
  // collective parts instead: its ranks time no phases.
  options.step_times = e.kind == ExperimentKind::Train && e.step_times && e.step.size() == 1 &&
                       !stepTimesLeftOff(point);
  if (point.nodes > 0) options.ranks_per_node = point.ranks_per_node;
  return options;
}

}  // namespace

bool stepTimesLeftOff(const Point& point) {
  return point.nodes > 1;
}

namespace {

RankTimesRecord rankTimes(const RankStepTimes& t, int32_t step) {
  RankTimesRecord r;
  r.step = step;
  r.rank = t.rank;
  r.work_ns = t.plugin_ns;
  r.device_ns = t.device_ns;
  r.wait_ns = t.start_ns + t.agree_ns + t.end_ns;
  r.step_ns = t.step_ns + t.start_ns + t.end_ns;
  // The runtime's own path is what the step takes beyond its work (the host's or the device's,
  // whichever is longer) and the waits for the others: its copies, exchanges and bookkeeping.
  // Not the phases' sum: on a GPU the runtime waits for the device inside several of them (an
  // input copy behind the last step's work, the outputs' copy), which is the device's time.
  r.path_ns = std::max<int64_t>(0, r.step_ns - r.wait_ns - std::max(r.work_ns, r.device_ns));
  return r;
}

}  // namespace

TimingPlan timingPlan(const Experiment& e) {
  return {e.warmup, e.warmup_time, e.steps, e.min_time, e.max_steps};
}

int64_t timeSteps(const StepFunction& step, const TimingPlan& plan, const StopWord& stop,
                  std::vector<SampleRecord>& samples, const std::function<void()>& at_timed_start,
                  const std::function<void(const SampleRecord&)>& after_step) {
  SampleRecord sample;
  const std::chrono::duration<double> warmup_time(plan.warmup_time), min_time(plan.min_time);
  auto last = Clock::now();
  const auto warm_start = last;
  for (int w = 0; w < plan.warmup || last - warm_start < warmup_time; ++w) {
    if (childShouldStop(stop)) return 0;
    step(sample, last);
    last = Clock::now();
  }
  samples.reserve(samples.size() + static_cast<size_t>(plan.steps));
  if (at_timed_start) {
    at_timed_start();
    last = Clock::now();  // its own time is in no step
  }
  const auto start = last;
  for (int n = 0; n < plan.max_steps && (n < plan.steps || last - start < min_time); ++n) {
    if (childShouldStop(stop)) break;
    step(sample, last);
    const auto end = Clock::now();
    sample.ns = nanoseconds(end - last);
    sample.step = n;
    samples.push_back(sample);
    last = end;
    if (after_step) {
      after_step(sample);
      last = Clock::now();  // its own time is in no step
    }
  }
  return nanoseconds(last - start);
}

int64_t timeStepsWithTelemetry(const StepFunction& step, const TimingPlan& plan,
                               const StopWord& stop, const std::vector<int>& telemetry_gpus,
                               std::vector<SampleRecord>& samples, std::vector<GpuReading>& gpus,
                               const std::function<void(const SampleRecord&)>& after_step) {
  // Loading NVML (nvmlInit alone takes milliseconds) overlaps the warm-up on a thread of its
  // own; the reads are not overlapped with anything: one taken on a thread during the warm-up or
  // the correctness check would put their energy into the window, one during the timed steps
  // would compete with them for the CPU.
  std::future<GpuTelemetry> opening;
  if (!telemetry_gpus.empty()) {
    opening = std::async(std::launch::async,
                         [&telemetry_gpus] { return GpuTelemetry::open(telemetry_gpus); });
  }
  std::optional<GpuTelemetry> nvml;
  GpuTelemetry::Mark start;
  auto at_timed_start = [&] {
    if (!opening.valid()) return;
    nvml.emplace(opening.get());
    start = nvml->mark();
  };
  const int64_t ns = timeSteps(step, plan, stop, samples, at_timed_start, after_step);
  if (nvml && !childShouldStop(stop)) gpus = nvml->since(start);
  return ns;
}

std::string resolvePlugin(const std::string& plugin) {
  const bool path = plugin.find('/') != std::string::npos ||
                    (plugin.size() > 3 && plugin.compare(plugin.size() - 3, 3, ".so") == 0);
  return path ? plugin : pluginPath(plugin);
}

std::string validateTrainExperiment(const Experiment& e, const Point& point,
                                    const std::string& plugin_path) {
  try {
    ForkOptions options = forkOptions(e, point);
    options.n_parallel = 1;
    options.backend = "cpu";  // a declaration check; the probe never touches a GPU
    Session session = fork(options);
    Model model = loadModel(session, plugin_path, point.model);
    for (const StepAction& a : e.step) {
      if (a.kind == StepAction::Kind::Call) {
        makeInputs(functionSpec(model, a.name), e.inputs, 1, e.seed);
      } else {
        variableSpec(model, a.name);
      }
    }
    checkedVariables(e, model);
    return {};
  } catch (const std::exception& error) {
    return error.what();
  }
}

JobOutcome runTrainRepetition(const Experiment& e, const Point& point, int repetition,
                              const std::string& plugin_path, const StopWord& stop,
                              const std::vector<int>& telemetry_gpus) {
  JobOutcome outcome;
  PointOutcome& result = outcome.points.emplace_back();
  result.point = point.index;
  try {
    const auto start = Clock::now();
    const ForkOptions fork_options = forkOptions(e, point);
    Session session = fork(fork_options);
    Model model = loadModel(session, plugin_path, point.model);
    Bound bound = bind(session, model, e, point, e.seed + static_cast<uint64_t>(repetition));
    session.distribute();
    outcome.startup_ns = nanoseconds(Clock::now() - start);

    const bool split = bound.actions.size() > 1;
    const bool native = point.collectives != "host";
    const int master = session.masterRank();
    auto step = [&](SampleRecord& sample, Clock::time_point start) {
      sample.rank = master;
      if (!split) {
        bound.actions[0].function(bound.actions[0].inputs);
        return;
      }
      sample.compute_ns = sample.collective_ns = 0;
      auto t = start;
      for (Bound::Action& a : bound.actions) {
        if (a.call) {
          a.function(a.inputs);
        } else {
          session.allReduce(a.variables, ReduceOp::Avg, {.native = native});
        }
        const auto now = Clock::now();
        (a.call ? sample.compute_ns : sample.collective_ns) += nanoseconds(now - t);
        t = now;
      }
    };
    // Every rank's phases of each timed step, read between steps (outside their times).
    std::function<void(const SampleRecord&)> after_step;
    if (fork_options.step_times) {
      after_step = [&](const SampleRecord& sample) {
        for (const RankStepTimes& t : session.lastStepTimes())
          result.rank_times.push_back(rankTimes(t, sample.step));
      };
    }
    // NVML is loaded here, after the session forked its ranks (gpu_telemetry.h).
    timeStepsWithTelemetry(step, timingPlan(e), stop, telemetry_gpus, result.samples, result.gpus,
                           after_step);
    result.steps = static_cast<int64_t>(result.samples.size());
    if (childShouldStop(stop)) {
      result.gpus.clear();
      outcome.status = result.status = PointStatus::interrupted;
      return outcome;
    }
    result.wrong = countWrong(session, model, bound.checked, result.message);
    if (result.wrong > 0) {
      result.status = PointStatus::wrong;
      result.message.resize(result.message.size() - 2);  // the last "; "
    }
  } catch (const std::exception& error) {
    result.status = PointStatus::failed;
    result.message = error.what();
  }
  return outcome;
}

}  // namespace synk::harness
