// synk-bench list: the stored runs.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kListCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/text/report_text.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int listCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  po::options_description options = readOptions("list options", flags);
  const po::variables_map values = parseArgs("list", args, options);
  if (printedHelp(values, options, "list [--db PATH]")) return kExitOk;
  const Store store = Store::open(flags.db, Store::Mode::Read);
  printRunList(stdout, store);
  return kExitOk;
}

}  // namespace

extern const Command kListCommand{"list", "list [--db PATH]", "list the stored runs", listCommand};

}  // namespace synk::harness
