#include "synk/harness/sweep/sweep.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>

#include "synk/core/error.h"
#include "synk/harness/base/child.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/base/machine_load.h"
#include "synk/harness/base/progress.h"
#include "synk/harness/run/collectives_runner.h"
#include "synk/harness/run/gpu_telemetry.h"
#include "synk/harness/run/outcome.h"
#include "synk/harness/run/runner.h"
#include "synk/harness/sweep/launched_point.h"

namespace synk::harness {

std::string SweepSummary::describe() const {
  if (status == "complete") return "";
  std::string out;
  for (const auto& [count, what] :
       {std::pair{ok, "ok"}, std::pair{wrong, "wrong"}, std::pair{failed, "failed"},
        std::pair{skipped, "skipped"}, std::pair{not_run, "not run"}}) {
    if (count > 0) out += (out.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  }
  return out + " (of " + std::to_string(ok + wrong + failed + skipped + not_run) + " points)";
}

namespace {

RunRecord runRecord(const Experiment& e, const MachineContext& m, const SweepOptions& options) {
  RunRecord run = contextRecord(m);
  run.experiment = e.name;
  run.kind = kindName(e.kind);
  run.tag = options.tag;
  run.config_file = e.file;
  run.config_text = e.text;
  run.config_resolved = e.canonical();
  run.command_line = options.command_line;
  return run;
}

// What a point accumulates over its job's repetitions.
struct Accumulated {
  std::vector<RepetitionRecord> repetitions;
  std::vector<SampleRecord> samples;
  std::vector<RankTimesRecord> rank_times;
  PointStatus status = PointStatus::ok;
  std::string reason;
  int64_t wrong = 0;
  // A launched point's hosts: each distinct list its repetitions ran on, failed ones included
  // ("a,b; a,c" where a launcher placed repetitions on other nodes).
  std::string hosts;

  void ranOn(const std::string& list) {
    if (list.empty() || ("; " + hosts + "; ").find("; " + list + "; ") != std::string::npos) return;
    hosts += (hosts.empty() ? "" : "; ") + list;
  }

  void fail(const std::string& why) {
    if (status != PointStatus::failed) reason = why;
    status = PointStatus::failed;
  }
};

using JobBody = std::function<JobOutcome(int repetition)>;

class Sweep {
 public:
  Sweep(const Experiment& e, const Plan& plan, Store& store, int64_t run_id, int gpus)
      : e_(e),
        plan_(plan),
        store_(store),
        run_id_(run_id),
        gpus_(gpus),
        progress_(plan.runnable() * e.repetitions) {}

  SweepSummary run() {
    installStopHandlers(&stop_);
    plugin_ = e_.kind == ExperimentKind::Train ? resolvePlugin(e_.plugin) : "";
    const std::string& plugin = plugin_;
    for (int job = 0; job < plan_.jobs; ++job) {
      std::vector<const Point*> points;
      for (const Point& p : plan_.points) {
        if (p.job == job) points.push_back(&p);
      }
      if (interrupted_) {  // the planned skips are still stored: the record says what was not run
        for (const Point* p : points) {
          Accumulated none;
          if (p->skipped) store(*p, none, isoNow());
        }
        continue;
      }
      const std::vector<int> telemetry =
          telemetryGpus(points.front()->backend, points.front()->ranks, gpus_, e_.gpu_telemetry);
      runJob(points, [&](int rep) -> JobOutcome {
        if (e_.kind == ExperimentKind::Train) {
          return runTrainRepetition(e_, *points.front(), rep, plugin, stop_, telemetry);
        }
        return runCollectivesRepetition(e_, points, rep, stop_, telemetry, &points_done_);
      });
    }
    ignoreStopSignals();  // a late Ctrl-C must not cut the run's record short (child.h)
    progress_.finish();
    summary_.run_id = run_id_;
    // Every runnable point not stored was not run: the job cut short and every job after it.
    summary_.not_run = plan_.runnable() - (summary_.ok + summary_.wrong + summary_.failed);
    summary_.status = interrupted_                           ? "interrupted"
                      : summary_.failed + summary_.wrong > 0 ? "failed"
                                                             : "complete";
    return summary_;
  }

 private:
  void store(const Point& p, Accumulated& acc, const std::string& started) {
    PointRecord record;
    record.run_id = run_id_;
    record.seq = p.index;
    record.key = p.key;
    record.axes = p.axes;
    record.status = p.skipped ? PointStatus::skipped : acc.status;
    record.nodes = p.nodes;
    record.ranks_per_node = p.ranks_per_node;
    record.hosts = acc.hosts;
    record.reason = p.skipped ? p.reason : acc.reason;
    record.wrong = acc.wrong;
    record.started_at = started;
    record.ended_at = p.skipped ? started : isoNow();
    store_.addPoint(record, acc.repetitions, acc.samples, acc.rank_times);
    if (record.status == PointStatus::ok) ++summary_.ok;
    if (record.status == PointStatus::wrong) ++summary_.wrong;
    if (record.status == PointStatus::failed) ++summary_.failed;
    if (record.status == PointStatus::skipped) ++summary_.skipped;
    if (record.status == PointStatus::failed || record.status == PointStatus::wrong) {
      progress_.note(toString(record.status) + ": " + p.label() + ": " + record.reason);
    }
  }

  // One repetition's process and what it reported.
  struct Attempt {
    bool stopped = false;  // a hard stop killed it
    std::string broken;    // why it gave no usable report
    JobOutcome outcome;
    std::string hosts;  // launched: the nodes' hosts
  };

  Attempt forked(const JobBody& body, int rep, std::chrono::milliseconds deadline) {
    const ChildResult child =
        runChild([&](int fd) { return writeAll(fd, encodeOutcome(body(rep))) ? 0 : 1; }, stop_,
                 deadline, [&] { progress_.partial(static_cast<int>(points_done_.value())); });
    Attempt attempt;
    attempt.stopped = child.killed;
    if (!child.exited || child.exit_code != 0) {
      attempt.broken = "its process " + child.describe();
      return attempt;
    }
    try {
      attempt.outcome = decodeOutcome(child.output);
    } catch (const RunFailed& e) {
      attempt.broken = "its process " + child.describe() + " (" + e.what() + ")";
    }
    return attempt;
  }

  Attempt launched(const Point& point, int rep, std::chrono::milliseconds deadline) {
    if (!launch_folder_) launch_folder_ = std::make_unique<LaunchFolder>(store_.path());
    LaunchedRepetition run =
        runLaunchedRepetition(e_, point, rep, plugin_, *launch_folder_, stop_, deadline, [] {});
    return {run.stopped, std::move(run.broken), std::move(run.outcome), std::move(run.hosts)};
  }

  void runJob(const std::vector<const Point*>& points, const JobBody& body) {
    const std::string started = isoNow();
    std::map<int, Accumulated> acc;
    int runnable = 0;
    for (const Point* p : points) {
      if (p->skipped) {
        Accumulated none;
        store(*p, none, started);
      } else {
        acc[p->index];
        ++runnable;
      }
    }
    if (runnable == 0) return;
    const auto deadline =
        std::chrono::milliseconds(static_cast<int64_t>(e_.repetition_timeout * 1000));
    bool failed = false;
    for (int rep = 0; rep < e_.repetitions && !failed; ++rep) {
      if (stop_.requested()) break;
      const std::string label = points.size() == 1
                                    ? points.front()->label()
                                    : points.front()->backend +
                                          " ranks=" + std::to_string(points.front()->ranks) + " (" +
                                          std::to_string(runnable) + " points)";
      progress_.begin(
          label + " · rep " + std::to_string(rep + 1) + "/" + std::to_string(e_.repetitions),
          runnable);
      const CpuTimes before = cpuTimesNow();
      points_done_.reset();
      Attempt attempt = points.front()->nodes > 0 ? launched(*points.front(), rep, deadline)
                                                  : forked(body, rep, deadline);
      const std::optional<double> other_cpu = otherCpus(before, cpuTimesNow());
      progress_.end();
      if (stop_.requested() || attempt.stopped) {
        interrupted_ = true;
        break;
      }
      JobOutcome& outcome = attempt.outcome;
      for (auto& [index, a] : acc)
        a.ranOn(attempt.hosts);
      if (!attempt.broken.empty()) {
        for (auto& [index, a] : acc)
          a.fail("repetition " + std::to_string(rep + 1) + ": " + attempt.broken);
        failed = true;
        continue;
      }
      if (outcome.status == PointStatus::interrupted) {
        interrupted_ = true;
        break;
      }
      if (outcome.status == PointStatus::failed) {
        for (auto& [index, a] : acc)
          a.fail(outcome.message);
        failed = true;
        continue;
      }
      for (PointOutcome& p : outcome.points) {
        if (p.status == PointStatus::interrupted) interrupted_ = true;
        Accumulated& a = acc.at(p.point);
        RepetitionRecord record;
        record.repetition = rep;
        record.startup_ns = outcome.startup_ns;
        record.steps = p.steps;
        record.status = p.status;
        record.message = p.message;
        record.other_cpu = other_cpu;
        record.gpus = p.gpus;
        record.hosts = attempt.hosts;
        a.repetitions.push_back(std::move(record));
        for (SampleRecord& s : p.samples) {
          s.repetition = rep;
          a.samples.push_back(s);
        }
        for (RankTimesRecord& t : p.rank_times) {
          t.repetition = rep;
          a.rank_times.push_back(t);
        }
        if (p.status == PointStatus::failed) {
          a.fail(p.message);
          failed = true;
        } else if (p.status == PointStatus::wrong) {
          a.wrong += p.wrong;
          if (a.status == PointStatus::ok) a.status = PointStatus::wrong, a.reason = p.message;
        }
      }
      if (interrupted_) break;
    }
    if (interrupted_) return;  // a job cut short keeps none of its points: only whole ones
    for (const Point* p : points) {
      if (!p->skipped) store(*p, acc.at(p->index), started);
    }
  }

  const Experiment& e_;
  const Plan& plan_;
  Store& store_;
  int64_t run_id_;
  int gpus_;  // GPUs the cuda backend sees: telemetry maps a point's ranks onto them
  StopWord stop_;
  SharedCounter points_done_;  // a collectives job's points measured so far (its child counts)
  Progress progress_;
  bool interrupted_ = false;
  SweepSummary summary_;
  std::string plugin_;                           // train: the plugin's resolved path
  std::unique_ptr<LaunchFolder> launch_folder_;  // launched points' reports, made on first use
};

}  // namespace

namespace {

// "option 'precision' is 'fp13'; choose one of ..." names the option a plugin refused (the SDK's
// wording, plugins/sdk/detail/options.h): the config key that set it, if any.
std::string refusedOptionKey(const Experiment& e, const Point& p, const std::string& message) {
  for (const auto& [option, value] : p.model) {
    if (message.find("option '" + option + "'") == std::string::npos) continue;
    // An axis value wins over the [model] section (plan.cc applies the axes last).
    for (const std::string& key : {"axes.model." + option, "axes." + option, "model." + option})
      if (e.origin.count(key) && (key.rfind("axes.", 0) != 0 || e.axes.model.count(option)))
        return key;
  }
  return {};
}

// "<file>: synk_plugin_v1.describe failed with SYNK_ERROR_INVALID_ARGUMENT: why" -> "why
// (<file>)": what the plugin said first, the ABI's wording left out.
std::string pluginReason(const std::string& message) {
  const size_t code = message.find(" failed with SYNK_ERROR_");
  if (code == std::string::npos) return message;
  const size_t why = message.find(": ", code);
  if (why == std::string::npos) return message;
  return message.substr(why + 2) + " (" + message.substr(0, message.find(": ")) + ")";
}

}  // namespace

void validateExperiment(const Experiment& e, const Plan& plan) {
  const std::string launched = startedAsOneOfSeveral();
  if (!launched.empty()) {
    throw BadInput("started by a launcher (" + launched +
                   "): run synk-bench once, outside mpirun and srun; an experiment's launch line "
                   "(experiment.launch) starts every point on its nodes");
  }
  if (e.kind != ExperimentKind::Train || plan.points.empty()) return;
  if (!e.launch.empty()) {
    // Found now, not as a failed point per repetition once the sweep has begun.
    const std::string program = LaunchLine::parse(e.launch).program();
    const char* path = std::getenv("PATH");
    if (!findProgram(program, path ? path : "")) {
      throw BadInput(describeSetting(e, "experiment.launch", e.launch) + ": the launcher '" +
                     program + "' is not " +
                     (program.find('/') == std::string::npos ? "on PATH" : "an executable file") +
                     " (mpirun: openmpi-bin; srun: slurm-wlm)");
    }
  }
  std::string plugin;
  try {
    plugin = resolvePlugin(e.plugin);  // a name goes through the plugin search path
  } catch (const PluginError& error) {
    // It says where it looked; the experiment says where the name came from.
    throw BadInput(describeSetting(e, "experiment.plugin", e.plugin) + ": " + error.what());
  }
  if (!std::filesystem::exists(plugin)) {
    throw BadInput(describeSetting(e, "experiment.plugin", e.plugin) + ": plugin '" + e.plugin +
                   "' not found: " + plugin + " does not exist");
  }
  // One probe per distinct set of model options (a model axis gives several): a value the
  // plugin refuses is found before anything runs, not as a failed point at the end.
  std::vector<const Point*> probes;
  for (const Point& p : plan.points) {
    if (p.skipped) continue;
    const bool seen = std::any_of(probes.begin(), probes.end(),
                                  [&](const Point* q) { return q->model == p.model; });
    if (!seen) probes.push_back(&p);
  }
  if (probes.empty()) probes.push_back(&plan.points.front());
  for (const Point* probe : probes) {
    StopWord stop;
    const ChildResult child = runChild(
        [&](int fd) { return writeAll(fd, validateTrainExperiment(e, *probe, plugin)) ? 0 : 1; },
        stop, std::chrono::seconds(120));
    if (!child.exited || child.exit_code != 0) {
      throw RunFailed("checking the experiment: the probe process " + child.describe());
    }
    if (child.output.empty()) continue;
    const std::string key = refusedOptionKey(e, *probe, child.output);
    if (!key.empty()) {
      const std::string option = key.substr(key.rfind('.') + 1);
      throw BadInput(describeSetting(e, key, e.origin.count(key) ? probe->model.at(option) : "") +
                     ": the model refused it: " + pluginReason(child.output));
    }
    throw BadInput(e.file + ": " + child.output);
  }
}

SweepSummary runSweep(const Experiment& e, const Plan& plan, const MachineContext& machine,
                      Store& store, const SweepOptions& options) {
  RunRecord run = runRecord(e, machine, options);
  // GPU telemetry: probed once (in a child: this process forks), said once when absent.
  const bool gpu_points = std::any_of(plan.points.begin(), plan.points.end(), [&](const Point& p) {
    return !p.skipped &&
           !telemetryGpus(p.backend, p.ranks, machine.gpu_count, e.gpu_telemetry).empty();
  });
  if (gpu_points) {
    run.telemetry = probeGpuTelemetry();
    if (run.telemetry.rfind("no NVML", 0) == 0) {
      std::fprintf(stderr,
                   "synk-bench: no GPU telemetry (%s): clock, power and energy columns "
                   "are left out\n",
                   run.telemetry.c_str());
    }
  }
  // ForkOptions refuses step times over several nodes (the ranks' times do not travel yet).
  const bool left_off = e.kind == ExperimentKind::Train && e.step_times &&
                        std::any_of(plan.points.begin(), plan.points.end(), [](const Point& p) {
                          return !p.skipped && stepTimesLeftOff(p);
                        });
  if (left_off) {
    std::fprintf(stderr,
                 "synk-bench: experiment.step_times is left off for points over several nodes: "
                 "the ranks' step times do not cross nodes yet (no rank-by-rank table for "
                 "them)\n");
  }
  store.beginRun(run);
  try {
    Sweep sweep(e, plan, store, run.id, machine.gpu_count);
    SweepSummary summary = sweep.run();
    store.endRun(run.id, summary.status, summary.describe());
    return summary;
  } catch (const std::exception& error) {
    try {
      store.endRun(run.id, "failed", error.what());
    } catch (const std::exception&) {
      // The store itself failed (disk full): the run stays "running" and list shows it failed
      // once this process is gone.
    }
    throw RunFailed(std::string("run ") + std::to_string(run.id) + " failed: " + error.what());
  }
}

}  // namespace synk::harness
