// What the commands (commands/*.cc) share: the run flags and runExperiment (run, collectives),
// the read flags (list, show, report, export), a report with extra sections (compare, history).
#include "synk/harness/cli/cli_commands.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/report/html/report_html.h"
#include "synk/harness/report/text/report_text.h"
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

po::options_description readOptions(const char* title, ReadFlags& flags) {
  po::options_description options(title);
  options.add_options()("help,h", "this help")("db", po::value(&flags.db),
                                               "the result database (default results/synk.db)")(
      "run", po::value(&flags.run), "a run id, latest, a baseline or a tag (default: latest)")(
      "scaling", po::value(&flags.scaling), "weak or strong (default: the run's)")(
      "exclude-throttled", po::bool_switch(&flags.exclude_throttled),
      "leave repetitions during which a GPU throttled out of the statistics");
  return options;
}

Scaling scalingOf(const ReadFlags& flags, const RunData& data) {
  return parseScaling(flags.scaling, runScaling(data.run));
}

void writeReportWith(const std::string& path, const Store& store, int64_t run,
                     const std::string& sections) {
  const RunData data = loadRun(store, run);
  writeHtmlReport(path, data, runScaling(data.run), sections);
}

}  // namespace synk::harness
