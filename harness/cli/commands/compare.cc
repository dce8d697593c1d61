// synk-bench compare: did the candidate regress? (and --ab: measure two builds alternately).
// Registered by its line in cli/CMakeLists.txt (SYNK_BENCH_COMMANDS), which puts kCompareCommand
// into the command table.
#include <algorithm>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/ab_loop.h"
#include "synk/harness/cli/cli.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/report/compare/compare_report.h"
#include "synk/harness/report/text/report_text.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

constexpr const char* kCompareUsage =
    "compare BASELINE CANDIDATE [--db PATH] [--strict] [--force] [--fail-on improvement] "
    "[--json] [--html FILE]\n"
    "       synk-bench compare --ab BASELINE_BUILD CANDIDATE_BUILD (EXPERIMENT.ini | --micro) "
    "[--repetitions N] [--set KEY=VALUE]... [--micro-arg ARG]... [--tag NAME] [same flags]\n"
    "BASELINE and CANDIDATE: a run id, latest, a baseline's name or a tag (its newest run).\n"
    "exit: 0 no regression, 1 regression, 2 bad input, 3 incomplete or incomparable";

struct CompareFlags {
  std::string db = kDefaultDatabase;
  std::string baseline, candidate, experiment, fail_on, html, tag = "ab";
  bool strict = false, force = false, json = false, ab = false, micro = false;
  bool exclude_throttled = false;
  double min_change = 0, noise_factor = 0, q = 0;
  int min_repetitions = 0, repetitions = 0;
  std::vector<std::string> sets, micro_args;
};

po::options_description compareOptions(CompareFlags& f) {
  po::options_description options("compare options");
  options.add_options()("help,h", "this help")("db", po::value(&f.db),
                                               "the result database (default results/synk.db)")(
      "baseline", po::value(&f.baseline), "run id, latest, baseline name or tag")(
      "candidate", po::value(&f.candidate), "run id, latest, baseline name or tag")(
      "strict", po::bool_switch(&f.strict),
      "Holm (family-wise error) instead of Benjamini-Hochberg")(
      "force", po::bool_switch(&f.force), "compare points of another machine or configuration")(
      "exclude-throttled", po::bool_switch(&f.exclude_throttled),
      "leave repetitions during which a GPU throttled out")(
      "fail-on", po::value(&f.fail_on), "improvement: exit 1 on a significant improvement too")(
      "json", po::bool_switch(&f.json), "the compare as JSON on standard output")(
      "html", po::value(&f.html), "also write the candidate's HTML report with the compare")(
      "min-change", po::value(&f.min_change), "smallest change that counts (default 0.05)")(
      "noise-factor", po::value(&f.noise_factor), "times the baseline's noise (default 2)")(
      "q", po::value(&f.q), "false discovery rate, or family-wise error with --strict (0.05)")(
      "min-repetitions", po::value(&f.min_repetitions), "per side to reach significance (5)")(
      "ab", po::bool_switch(&f.ab), "measure two builds alternately, then compare")(
      "experiment", po::value(&f.experiment), "with --ab: the experiment file")(
      "micro", po::bool_switch(&f.micro), "with --ab: synk-micro instead of an experiment")(
      "repetitions", po::value(&f.repetitions),
      "with --ab: rounds per build (default: the experiment's repetitions, at least 5)")(
      "set", po::value(&f.sets)->composing(), "with --ab: KEY=VALUE for every experiment run")(
      "micro-arg", po::value(&f.micro_args)->composing(), "with --ab --micro: a synk-micro flag")(
      "tag", po::value(&f.tag), "with --ab: runs are tagged TAG-baseline, TAG-candidate (ab)");
  return options;
}

CompareOptions compareSettings(const CompareFlags& f, const po::variables_map& values) {
  CompareOptions o;
  if (values.count("min-change")) o.min_change = f.min_change;
  if (values.count("noise-factor")) o.noise_factor = f.noise_factor;
  if (values.count("q")) {
    if (f.q <= 0 || f.q >= 1) throw BadInput("--q must lie between 0 and 1");
    o.q = f.q;
  }
  if (values.count("min-repetitions")) {
    if (f.min_repetitions < 2) throw BadInput("--min-repetitions must be at least 2");
    o.min_repetitions = f.min_repetitions;
  }
  if (!f.fail_on.empty() && f.fail_on != "improvement")
    throw BadInput("--fail-on takes 'improvement', not '" + f.fail_on + "'");
  o.fail_on_improvement = !f.fail_on.empty();
  o.strict = f.strict;
  o.force = f.force;
  o.exclude_throttled = f.exclude_throttled;
  return o;
}

// The repetitions --ab measures per build: the experiment's, and enough to reach significance.
int abRounds(const CompareFlags& f, const CompareOptions& o) {
  if (f.repetitions > 0) return f.repetitions;
  int rounds = 5;
  if (!f.micro) {
    const Experiment e = loadExperiment(f.experiment, f.sets);
    rounds = std::max(e.repetitions, e.compare.min_repetitions);
  }
  return std::max(rounds, o.min_repetitions.value_or(5));
}

int compareCommand(const std::vector<std::string>& args, const std::string& command_line) {
  CompareFlags f;
  po::options_description options = compareOptions(f);
  const po::variables_map values =
      parseArgs("compare", args, options, {"baseline", "candidate", "experiment"});
  if (printedHelp(values, options, kCompareUsage)) return kExitOk;
  if (f.baseline.empty() || f.candidate.empty())
    throw BadInput(std::string("which two? usage: synk-bench ") + kCompareUsage);
  const CompareOptions settings = compareSettings(f, values);
  int64_t baseline = 0, candidate = 0;
  if (f.ab) {
    if (f.micro == !f.experiment.empty())
      throw BadInput("--ab measures an experiment file or --micro: give one of them");
    AbOptions ab;
    ab.baseline_build = f.baseline;
    ab.candidate_build = f.candidate;
    ab.experiment = f.experiment;
    ab.micro = f.micro;
    ab.sets = f.sets;
    ab.micro_args = f.micro_args;
    ab.rounds = abRounds(f, settings);
    ab.db = f.db;
    ab.tag = f.tag;
    ab.command_line = command_line;
    const AbRuns runs = runAlternately(ab, f.json ? stderr : stdout);
    baseline = runs.baseline;
    candidate = runs.candidate;
  } else if (!f.experiment.empty()) {
    throw BadInput("an experiment file is for --ab; compare takes two stored runs");
  }
  const Store store = Store::open(f.db, Store::Mode::Read);
  if (!f.ab) {
    baseline = resolveRunRef(store, f.baseline);
    candidate = resolveRunRef(store, f.candidate);
  }
  const RunCompare result = compareRuns(store, baseline, candidate, settings);
  if (f.json) {
    std::fputs(compareJson(result).c_str(), stdout);
  } else {
    printCompare(stdout, result);
  }
  if (!f.html.empty()) writeReportWith(f.html, store, candidate, compareHtmlSection(result));
  return result.exit_code;
}

}  // namespace

extern const Command kCompareCommand{
    "compare", "compare BASELINE CANDIDATE [--db PATH] [--strict] [--force] [--json]",
    "did the candidate regress? per point: change, Mann-Whitney, verdict; exit 1 if so",
    compareCommand};

}  // namespace synk::harness
