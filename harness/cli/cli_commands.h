#pragma once
// What the commands (commands/*.cc, one file each) share; defined in cli_commands.cc, the
// option parsing in cli.cc.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/analysis/report_data.h"
#include "synk/harness/config/config.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

// What run and collectives share: where results go and how the run is reported.
struct RunFlags {
  std::string db = kDefaultDatabase;
  std::string tag, html, scaling;
  std::vector<std::string> sets;
};
void addRunFlags(boost::program_options::options_description& options, RunFlags& flags);
// Runs an experiment: plan, check, sweep, print, report. The exit code says whether every point
// ran and was right.
int runExperiment(const Experiment& experiment, const RunFlags& flags,
                  const std::string& command_line);

// What the commands that read a stored run share (list, show, report, export): --db, the run,
// --scaling, --exclude-throttled.
struct ReadFlags {
  std::string db = kDefaultDatabase;
  std::string run, scaling;
  bool exclude_throttled = false;
  SummaryOptions summary() const { return {.exclude_throttled = exclude_throttled}; }
};
boost::program_options::options_description readOptions(const char* title, ReadFlags& flags);
// The scaling asked for, or the run's.
Scaling scalingOf(const ReadFlags& flags, const RunData& data);

// Writes the HTML report of `run` with extra sections (compare --html, history --html).
void writeReportWith(const std::string& path, const Store& store, int64_t run,
                     const std::string& sections);

// Parses a command's arguments with Boost.Program_options; errors become BadInput naming the
// command. `positional` names the options that take positional arguments, in order; a last
// name ending in "..." takes all the rest ("file...").
// Prints the usage line and the options when --help was given; returns whether it did.
bool printedHelp(const boost::program_options::variables_map& values,
                 const boost::program_options::options_description& options, const char* usage);

// "weak" | "strong"; `fallback` when empty. Throws BadInput otherwise.
Scaling parseScaling(const std::string& text, Scaling fallback);

boost::program_options::variables_map parseArgs(
    const std::string& command, const std::vector<std::string>& args,
    const boost::program_options::options_description& options,
    const std::vector<std::string>& positional = {});

}  // namespace synk::harness
