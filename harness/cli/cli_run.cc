// The commands that measure: run and plan (collectives: cli_collectives.cc).
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>
#include <filesystem>

#include "synk/harness/analysis/estimate.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/report/report_html.h"
#include "synk/harness/report/report_text.h"
#include "synk/harness/store/store.h"
#include "synk/harness/sweep/sweep.h"

namespace synk::harness {

namespace po = boost::program_options;

void addRunFlags(po::options_description& options, RunFlags& flags) {
  options.add_options()("db", po::value(&flags.db),
                        "the result database (default results/synk.db)")(
      "tag", po::value(&flags.tag), "a name stored with the run")(
      "html", po::value(&flags.html), "also write the run's HTML report to FILE")(
      "scaling", po::value(&flags.scaling),
      "report weak or strong scaling (default: the config's)")(
      "set", po::value(&flags.sets)->composing(), "override a config key: --set axes.ranks=1,2");
}

namespace {

void printPlan(std::FILE* out, const Plan& plan) {
  for (const Point& p : plan.points) {
    std::fprintf(out, "%4d  %-8s %s%s\n", p.index, p.skipped ? "skip" : "run", p.label().c_str(),
                 p.skipped ? ("  (" + p.reason + ")").c_str() : "");
  }
}

}  // namespace

int runExperiment(const Experiment& e, const RunFlags& flags, const std::string& command_line) {
  const MachineContext machine = probeMachine();
  const Plan plan = makePlan(e, machine.limits(), machine.machineKey());
  validateExperiment(e, plan);
  Store store = Store::open(flags.db, Store::Mode::Write);
  std::fprintf(stderr,
               "synk-bench: %s: %zu point(s), %d to run (x %d repetitions), %zu skipped here\n",
               e.name.c_str(), plan.points.size(), plan.runnable(), e.repetitions,
               plan.points.size() - static_cast<size_t>(plan.runnable()));
  const SweepSummary summary =
      runSweep(e, plan, machine, store, {.tag = flags.tag, .command_line = command_line});
  const RunData data = loadRun(store, summary.run_id);
  const Scaling scaling = parseScaling(flags.scaling, e.scaling);
  printRunTable(stdout, data, scaling);
  std::fflush(stdout);
  if (!flags.html.empty()) {
    writeHtmlReport(flags.html, data, scaling);
    std::fprintf(stderr, "synk-bench: report written to %s\n", flags.html.c_str());
  }
  std::fprintf(
      stderr, "synk-bench: run %lld stored in %s (%s): %d ok, %d wrong, %d failed, %d skipped%s\n",
      static_cast<long long>(summary.run_id), flags.db.c_str(), summary.status.c_str(), summary.ok,
      summary.wrong, summary.failed, summary.skipped,
      summary.not_run ? (", " + std::to_string(summary.not_run) + " not run").c_str() : "");
  return summary.allOk() ? kExitOk : kExitRunFailed;
}

int runCommand(const std::vector<std::string>& args, const std::string& command_line) {
  RunFlags flags;
  std::string file;
  po::options_description options("run options");
  options.add_options()("help,h", "this help")("experiment", po::value(&file),
                                               "the experiment file");
  addRunFlags(options, flags);
  const po::variables_map values = parseArgs("run", args, options, {"experiment"});
  if (printedHelp(values, options, "run EXPERIMENT.ini [options]")) return kExitOk;
  if (file.empty()) throw BadInput("which experiment? synk-bench run experiments/quickstart.ini");
  return runExperiment(loadExperiment(file, flags.sets), flags, command_line);
}

int planCommand(const std::vector<std::string>& args, const std::string&) {
  std::string file, db = kDefaultDatabase;
  std::vector<std::string> sets;
  po::options_description options("plan options");
  options.add_options()("help,h", "this help")(
      "experiment", po::value(&file), "the experiment file")("set", po::value(&sets)->composing(),
                                                             "override a config key")(
      "db", po::value(&db), "earlier runs to estimate the time from (default results/synk.db)");
  const po::variables_map values = parseArgs("plan", args, options, {"experiment"});
  if (printedHelp(values, options, "plan EXPERIMENT.ini [--set KEY=VALUE]...")) return kExitOk;
  if (file.empty()) throw BadInput("which experiment? synk-bench plan experiments/quickstart.ini");
  const Experiment e = loadExperiment(file, sets);
  const MachineContext machine = probeMachine();
  const Plan plan = makePlan(e, machine.limits(), machine.machineKey());
  std::printf("%s (%s): %zu point(s), %d runnable here, %d repetition(s) each\n", e.name.c_str(),
              kindName(e.kind), plan.points.size(), plan.runnable(), e.repetitions);
  printPlan(stdout, plan);
  // The time it will take, from earlier runs of the same points (none: said so).
  if (std::filesystem::exists(db)) {
    const Store store = Store::open(db, Store::Mode::Read);
    std::printf("time: %s\n", estimatePlan(e, plan, store).describe(db).c_str());
  } else {
    std::printf("time: no estimate: no database at %s to take earlier runs from\n", db.c_str());
  }
  return kExitOk;
}

}  // namespace synk::harness
