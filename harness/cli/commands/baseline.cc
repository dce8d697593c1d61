// synk-bench baseline: name a run as a baseline, or list them.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kBaselineCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int baselineCommand(const std::vector<std::string>& args, const std::string&) {
  std::string db = kDefaultDatabase, name, run;
  po::options_description options("baseline options");
  options.add_options()("help,h", "this help")("db", po::value(&db), "the result database")(
      "name", po::value(&name), "the baseline's name")("run", po::value(&run),
                                                       "run id, latest, baseline name or tag");
  const po::variables_map values = parseArgs("baseline", args, options, {"name", "run"});
  const char* usage = "baseline [NAME RUN] [--db PATH]   (no arguments: list the baselines)";
  if (printedHelp(values, options, usage)) return kExitOk;
  if (name.empty()) {
    const Store store = Store::open(db, Store::Mode::Read);
    for (const auto& [baseline, id] : store.baselines())
      std::printf("%-20s run %lld\n", baseline.c_str(), static_cast<long long>(id));
    return kExitOk;
  }
  if (run.empty()) throw BadInput(std::string("which run? usage: synk-bench ") + usage);
  const bool digits = name.find_first_not_of("0123456789") == std::string::npos;
  if (digits || name == "latest" || name.find_first_of(" \t\n") != std::string::npos) {
    throw BadInput(
        "'" + name +
        "' cannot name a baseline: it would read as a run id or 'latest', or has spaces");
  }
  Store store = Store::open(db, Store::Mode::Write);
  const int64_t id = resolveRunRef(store, run);
  store.setBaseline(name, id);
  const RunRecord record = *store.run(id);
  std::printf("baseline %s = run %lld (%s, commit %s, %s)\n", name.c_str(),
              static_cast<long long>(id), record.experiment.c_str(),
              record.commit.substr(0, 10).c_str(), record.started_at.c_str());
  return kExitOk;
}

}  // namespace

extern const Command kBaselineCommand{"baseline", "baseline [NAME RUN] [--db PATH]",
                                      "name a run as a baseline (or list them)", baselineCommand};

}  // namespace synk::harness
