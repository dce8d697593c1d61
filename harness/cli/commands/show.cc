// synk-bench show: a run's context and table.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kShowCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/text/report_text.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int showCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  po::options_description options = readOptions("show options", flags);
  const po::variables_map values = parseArgs("show", args, options, {"run"});
  if (printedHelp(values, options, "show [RUN] [--db PATH] [--scaling weak|strong]"))
    return kExitOk;
  const Store store = Store::open(flags.db, Store::Mode::Read);
  const RunData data = loadRun(store, resolveRunRef(store, flags.run), flags.summary());
  printRunContext(stdout, data);
  std::printf("\n");
  printRunTable(stdout, data, scalingOf(flags, data));
  return kExitOk;
}

}  // namespace

extern const Command kShowCommand{"show", "show [RUN] [--db PATH] [--scaling weak|strong]",
                                  "a run's context and table (default: the latest run)",
                                  showCommand};

}  // namespace synk::harness
