// synk-bench plan: the points an experiment would run here, which it skips and why, and how long.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kPlanCommand
// into the command table.
#include "synk/harness/plan/plan.h"
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>
#include <filesystem>

#include "synk/harness/analysis/estimate.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/store/store.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

void printPlan(std::FILE* out, const Plan& plan) {
  for (const Point& p : plan.points) {
    std::fprintf(out, "%4d  %-8s %s%s\n", p.index, p.skipped ? "skip" : "run", p.label().c_str(),
                 p.skipped ? ("  (" + p.reason + ")").c_str() : "");
  }
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

}  // namespace

extern const Command kPlanCommand{
    "plan", "plan EXPERIMENT.ini [--set KEY=VALUE]... [--db PATH]",
    "the points an experiment would run here, which it would skip and why, and how long",
    planCommand};

}  // namespace synk::harness
