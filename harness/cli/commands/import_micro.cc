// synk-bench import-micro: store Google Benchmark results (synk-micro's) as a run.
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts
// kImportMicroCommand into the command table.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/core/error.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/text/report_text.h"
#include "synk/harness/sweep/micro_store.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

int importMicroCommand(const std::vector<std::string>& args, const std::string& command_line) {
  std::string db = kDefaultDatabase;
  std::vector<std::string> files;
  MicroImportOptions import;
  import.command_line = command_line;
  po::options_description options("import-micro options");
  options.add_options()("help,h", "this help")("db", po::value(&db), "the result database")(
      "tag", po::value(&import.tag), "a tag for the run")("commit", po::value(&import.commit),
                                                          "the commit, where the files do not say")(
      "file", po::value(&files)->composing(), "Google Benchmark JSON (--benchmark_out=FILE)");
  const po::variables_map values = parseArgs("import-micro", args, options, {"file..."});
  const char* usage = "import-micro FILE.json... [--db PATH] [--tag NAME] [--commit HASH]";
  if (printedHelp(values, options, usage)) return kExitOk;
  if (files.empty()) throw BadInput(std::string("which file? usage: synk-bench ") + usage);
  std::vector<MicroResults> results;
  try {
    for (const std::string& file : files)
      results.push_back(readMicroResultsFile(file));
  } catch (const InvalidArgument& e) {
    throw BadInput(e.what());
  }
  Store store = Store::open(db, Store::Mode::Write);
  const int64_t run = importMicroRun(store, results, files, import);
  const RunData data = loadRun(store, run);
  std::printf("run %lld: %zu benchmarks of %s\n", static_cast<long long>(run), data.points.size(),
              data.run.experiment.c_str());
  printMicroTable(stdout, data);
  return kExitOk;
}

}  // namespace

extern const Command kImportMicroCommand{
    "import-micro", "import-micro FILE.json... [--db PATH] [--tag NAME]",
    "store Google Benchmark results (synk-micro's) as a run, for compare and history",
    importMicroCommand};

}  // namespace synk::harness
