// The commands that read stored results: list, show, report, export, site.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>
#include <memory>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/export.h"
#include "synk/harness/report/report_html.h"
#include "synk/harness/report/report_text.h"
#include "synk/harness/report/site.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

struct ReadFlags {
  std::string db = kDefaultDatabase;
  std::string run, scaling;
  bool exclude_throttled = false;
  SummaryOptions summary() const { return {.exclude_throttled = exclude_throttled}; }
};

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

}  // namespace

int listCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  po::options_description options = readOptions("list options", flags);
  const po::variables_map values = parseArgs("list", args, options);
  if (printedHelp(values, options, "list [--db PATH]")) return kExitOk;
  const Store store = Store::open(flags.db, Store::Mode::Read);
  printRunList(stdout, store);
  return kExitOk;
}

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

int exportCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  std::string output;
  bool json = false, csv = false;
  po::options_description options = readOptions("export options", flags);
  options.add_options()("json", po::bool_switch(&json), "one JSON document")(
      "csv", po::bool_switch(&csv), "one CSV row per sample")(
      "output", po::value(&output), "write to FILE (default: standard output)");
  const po::variables_map values = parseArgs("export", args, options, {"run"});
  if (printedHelp(values, options, "export [RUN] --json|--csv [--output FILE]")) return kExitOk;
  if (json == csv) throw BadInput("choose one format: --json or --csv");
  const Store store = Store::open(flags.db, Store::Mode::Read);
  const int64_t run = resolveRunRef(store, flags.run);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  std::FILE* out = stdout;
  if (!output.empty()) {
    file.reset(std::fopen(output.c_str(), "w"));
    if (!file) throw BadInput("cannot write " + output);
    out = file.get();
  }
  if (json) {
    exportJson(out, store, run, flags.summary());
  } else {
    exportCsv(out, store, run);
  }
  return kExitOk;
}

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

}  // namespace synk::harness
