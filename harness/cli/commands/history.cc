// synk-bench history: medians per commit in commit order, and where lasting shifts began.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kHistoryCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/compare/history_report.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int historyCommand(const std::vector<std::string>& args, const std::string&) {
  std::string db = kDefaultDatabase, experiment, html;
  HistoryOptions h;
  po::options_description options("history options");
  options.add_options()("help,h", "this help")("db", po::value(&db), "the result database")(
      "experiment", po::value(&experiment), "the experiment's name")(
      "point", po::value(&h.point), "one point: its key, a key prefix, or its label")(
      "git", po::value(&h.git_dir), "the repository that orders commits (default: synk's source)")(
      "html", po::value(&html), "also write the HTML report of the latest run with the history");
  const po::variables_map values = parseArgs("history", args, options, {"experiment"});
  const char* usage = "history EXPERIMENT [--point KEY] [--db PATH] [--git DIR] [--html FILE]";
  if (printedHelp(values, options, usage)) return kExitOk;
  if (experiment.empty())
    throw BadInput(std::string("which experiment? usage: synk-bench ") + usage);
  const Store store = Store::open(db, Store::Mode::Read);
  const History history = loadHistory(store, experiment, h);
  printHistory(stdout, history);
  if (!html.empty()) {
    int64_t latest = 0;
    for (const RunRecord& run : store.runs())
      if (run.experiment == experiment && latest == 0) latest = run.id;
    writeReportWith(html, store, latest, historyHtmlSection(history));
  }
  return kExitOk;
}

}  // namespace

extern const Command kHistoryCommand{
    "history", "history EXPERIMENT [--point KEY] [--db PATH] [--html FILE]",
    "medians per commit in commit order, and where lasting shifts began", historyCommand};

}  // namespace synk::harness
