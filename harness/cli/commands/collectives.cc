// synk-bench collectives: nccl-tests' flags -> a collectives experiment, then a run
// (runExperiment, cli_commands.cc). Registered by its line in cli/CMakeLists.txt
// (SYNK_BENCH_COMMANDS), which puts kCollectivesCommand into the command table.
//
// Each flag becomes one config entry that names the flag it came from, so a bad value reads
// "--op all_scatter: axes.op = 'all_scatter': ..." rather than pointing into text the user never
// wrote. Flags of nccl-tests that do not fit synk's model are refused with the way to say it here:
// -g and -t (GPUs and threads per process) are ranks, one process each.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

struct Flag {
  const char* names;  // Boost's "long,s"
  const char* key;    // the config key it sets
  const char* help;
  std::string value;  // nccl-tests' default where it has one
};

// "-n" for "iters,n", "--op" for "op".
std::string spelling(const char* names) {
  const std::string n = names;
  const size_t comma = n.find(',');
  return comma == std::string::npos ? "--" + n : "-" + n.substr(comma + 1);
}

std::string longName(const char* names) {
  const std::string n = names;
  return n.substr(0, n.find(','));
}

int collectivesCommand(const std::vector<std::string>& args, const std::string& command_line) {
  RunFlags flags;
  std::vector<Flag> table = {
      {"op", "axes.op", "all_reduce, broadcast, reduce, all_gather, gather, scatter, all (a list)",
       "all_reduce"},
      {"backend", "axes.backend", "cpu, host (cuda host-staged), nccl, all (a list)", "cpu"},
      {"ranks", "axes.ranks", "rank counts, one process (and GPU) each (a list or range)", "2"},
      {"datatype,d", "axes.dtype", "float, double, half, bfloat16, int32, int64, uint8, all",
       "float"},
      {"redop,o", "axes.redop", "sum, prod, max, min, avg, all", "sum"},
      {"root,r", "axes.root", "root rank (a list)", "0"},
      {"iters,n", "experiment.steps", "timed iterations", "20"},
      {"warmup_iters,w", "experiment.warmup", "warm-up iterations", "5"},
      {"check,c", "experiment.check", "correctness-check iterations (0: #wrong is N/A)", "1"},
      {"repetitions", "experiment.repetitions", "fresh process groups per point", "1"},
      {"timing", "experiment.timing",
       "batch: n iterations back to back, one synchronisation, the mean per iteration (as "
       "nccl-tests); iteration: each iteration synchronised and timed alone (a distribution)",
       "batch"},
  };
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes, factor, ngpus, nthreads;
  int blocking = 0;
  bool per_iteration = false;
  po::options_description options("collectives options (nccl-tests' names where they exist)");
  options.add_options()("help,h", "this help");
  for (Flag& f : table)
    options.add_options()(f.names, po::value(&f.value), f.help);
  options.add_options()("minbytes,b", po::value(&min_bytes), "smallest size (K, M, G suffixes)")(
      "maxbytes,e", po::value(&max_bytes), "largest size")("stepfactor,f", po::value(&factor),
                                                           "multiply the size by this (default 2)")(
      "stepbytes,i", po::value(&step_bytes), "add this to the size instead")(
      "blocking,z", po::value(&blocking),
      "1: a barrier and a synchronisation around every timed iteration (nccl-tests -z 1)")(
      "per_iter_timing,I", po::bool_switch(&per_iteration), "the same as --timing iteration")(
      "ngpus,g", po::value(&ngpus), "refused: synk runs one process per GPU, see --ranks")(
      "nthreads,t", po::value(&nthreads), "refused: synk runs one process per GPU, see --ranks");
  addRunFlags(options, flags);
  const po::variables_map values = parseArgs("collectives", args, options);
  if (printedHelp(values, options, "collectives [options]")) return kExitOk;
  for (const char* refused : {"ngpus", "nthreads"}) {
    if (!values.count(refused)) continue;
    const std::string flag = refused == std::string("ngpus") ? "-g" : "-t";
    throw BadInput(flag + " " + values[refused].as<std::string>() +
                   ": synk runs one process per GPU (a rank), never several GPUs or threads in "
                   "one process; ask for GPUs with --ranks (all_reduce_perf -g 2 is "
                   "--ranks 2 --backend nccl)");
  }
  if (!step_bytes.empty() && !factor.empty()) {
    throw BadInput("-f " + factor + " -i " + step_bytes +
                   ": give a step factor (-f) or a step in bytes (-i), not both");
  }

  std::map<std::string, ConfigEntry> entries;
  for (const Flag& f : table) {
    const bool given = values.count(longName(f.names)) && !values[longName(f.names)].defaulted();
    entries[f.key] = {
        f.value, given ? spelling(f.names) + " " + f.value : "the default of " + spelling(f.names)};
  }
  if (per_iteration) entries["experiment.timing"] = {"iteration", "-I"};
  entries["experiment.blocking"] = {blocking ? "true" : "false", "-z " + std::to_string(blocking)};
  const std::string step = step_bytes.empty() ? "x" + (factor.empty() ? "2" : factor) : step_bytes;
  const std::string sizes_flag =
      "-b " + min_bytes + " -e " + max_bytes +
      (step_bytes.empty() ? " -f " + (factor.empty() ? "2" : factor) : " -i " + step_bytes);
  entries["axes.bytes"] = {min_bytes + ":" + max_bytes + ":" + step, sizes_flag};
  const std::string text =
      "# synk-bench collectives, from the command line\n[experiment]\n"
      "kind = collectives\nname = collectives\n";
  Experiment e = parseExperiment(text, "synk-bench collectives", flags.sets, entries);
  e.file.clear();
  return runExperiment(e, flags, command_line);
}

}  // namespace

extern const Command kCollectivesCommand{
    "collectives",
    "collectives --op OP --backend B[,B] --ranks N -b MIN -e MAX -f FACTOR -n ITERS -w WARMUP "
    "-c CHECKS [-d TYPE] [-o REDOP] [-r ROOT] [-z]",
    "nccl-tests-style collective bandwidth on cpu, host (cuda host-staged) and nccl",
    collectivesCommand};

}  // namespace synk::harness
