// synk-bench site: a static site over the whole database.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kSiteCommand
// into the command table.
#include "synk/harness/report/publish/site.h"
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int siteCommand(const std::vector<std::string>& args, const std::string&) {
  std::string db = kDefaultDatabase, dir;
  po::options_description options("site options");
  options.add_options()("help,h", "this help")("dir", po::value(&dir), "the folder to write")(
      "db", po::value(&db), "the result database (default results/synk.db)");
  const po::variables_map values = parseArgs("site", args, options, {"dir"});
  if (printedHelp(values, options, "site DIR [--db PATH]")) return kExitOk;
  if (dir.empty()) throw BadInput("where to? synk-bench site DIR");
  const Store store = Store::open(db, Store::Mode::Read);
  const SiteSummary s = writeSite(store, dir);
  std::printf("%s/index.html: %d run(s) of %d experiment(s), %d page(s)\n", dir.c_str(), s.runs,
              s.experiments, s.pages);
  return kExitOk;
}

}  // namespace

extern const Command kSiteCommand{
    "site", "site DIR [--db PATH]",
    "a static site over the database: runs, experiments with history, comparisons", siteCommand};

}  // namespace synk::harness
