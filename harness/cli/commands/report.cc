// synk-bench report: a run's self-contained HTML report.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kReportCommand
// into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/compare/compare_report.h"
#include "synk/harness/report/compare/history_report.h"
#include "synk/harness/report/html/report_html.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

// The report's extra sections, --compare BASELINE and --history.
std::string compareSection(const Store& store, const std::string& baseline, int64_t run) {
  return compareHtmlSection(compareRuns(store, resolveRunRef(store, baseline), run, {}));
}

std::string historySection(const Store& store, const std::string& experiment) {
  return historyHtmlSection(loadHistory(store, experiment));
}

int reportCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  std::string html, compare;
  bool history = false;
  po::options_description options = readOptions("report options", flags);
  options.add_options()("html", po::value(&html), "write the HTML report to FILE")(
      "compare", po::value(&compare), "add the compare with BASELINE (run, baseline name, tag)")(
      "history", po::bool_switch(&history), "add the history of the run's experiment");
  const po::variables_map values = parseArgs("report", args, options, {"run"});
  if (printedHelp(values, options,
                  "report [RUN] --html FILE [--db PATH] [--compare BASELINE] [--history]"))
    return kExitOk;
  if (html.empty()) throw BadInput("where to? synk-bench report [RUN] --html FILE");
  const Store store = Store::open(flags.db, Store::Mode::Read);
  const RunData data = loadRun(store, resolveRunRef(store, flags.run), flags.summary());
  std::string sections;
  if (!compare.empty()) sections += compareSection(store, compare, data.run.id);
  if (history) sections += historySection(store, data.run.experiment);
  writeHtmlReport(html, data, scalingOf(flags, data), sections);
  std::printf("%s\n", html.c_str());
  return kExitOk;
}

}  // namespace

extern const Command kReportCommand{"report",
                                    "report [RUN] --html FILE [--db PATH] [--scaling weak|strong]",
                                    "write a run's self-contained HTML report", reportCommand};

}  // namespace synk::harness
