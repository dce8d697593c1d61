// synk-bench run: an experiment's sweep, stored, printed (runExperiment, cli_commands.cc).
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kRunCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

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

}  // namespace

extern const Command kRunCommand{
    "run", "run EXPERIMENT.ini [--db PATH] [--tag NAME] [--set KEY=VALUE]... [--html FILE]",
    "run an experiment's sweep, store every sample, print its table", runCommand};

}  // namespace synk::harness
