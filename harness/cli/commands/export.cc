// synk-bench export: every point and sample of a run as JSON or CSV.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kExportCommand
// into the command table.
#include "synk/harness/report/publish/export.h"
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>
#include <memory>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int exportCommand(const std::vector<std::string>& args, const std::string&) {
  ReadFlags flags;
  std::string output;
  bool json = false, csv = false, ranks = false;
  po::options_description options = readOptions("export options", flags);
  options.add_options()("json", po::bool_switch(&json), "one JSON document")(
      "csv", po::bool_switch(&csv), "one CSV row per sample")(
      "ranks", po::bool_switch(&ranks),
      "with --csv: one row per point and rank, its step-time medians and the straggler")(
      "output", po::value(&output), "write to FILE (default: standard output)");
  const po::variables_map values = parseArgs("export", args, options, {"run"});
  if (printedHelp(values, options, "export [RUN] --json|--csv [--ranks] [--output FILE]"))
    return kExitOk;
  if (json == csv) throw BadInput("choose one format: --json or --csv");
  if (ranks && !csv) throw BadInput("--ranks is a CSV of rank times: add --csv");
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
  } else if (ranks) {
    exportRankCsv(out, store, run, flags.summary());
  } else {
    exportCsv(out, store, run);
  }
  return kExitOk;
}

}  // namespace

extern const Command kExportCommand{
    "export", "export [RUN] --json|--csv [--ranks] [--output FILE] [--db PATH]",
    "every point and sample of a run as JSON or CSV", exportCommand};

}  // namespace synk::harness
