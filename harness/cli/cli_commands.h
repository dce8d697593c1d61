#pragma once
// The functions behind the command table (cli.cc), one file per group.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

#include "synk/harness/config/config.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

int runCommand(const std::vector<std::string>& args, const std::string& command_line);
int planCommand(const std::vector<std::string>& args, const std::string& command_line);
int collectivesCommand(const std::vector<std::string>& args, const std::string& command_line);
int listCommand(const std::vector<std::string>& args, const std::string& command_line);
int showCommand(const std::vector<std::string>& args, const std::string& command_line);
int reportCommand(const std::vector<std::string>& args, const std::string& command_line);
int exportCommand(const std::vector<std::string>& args, const std::string& command_line);
int siteCommand(const std::vector<std::string>& args, const std::string& command_line);
int compareCommand(const std::vector<std::string>& args, const std::string& command_line);
int baselineCommand(const std::vector<std::string>& args, const std::string& command_line);
int historyCommand(const std::vector<std::string>& args, const std::string& command_line);
int importMicroCommand(const std::vector<std::string>& args, const std::string& command_line);

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

// The HTML report's sections for `report --compare BASELINE` and `report --history`.
std::string compareSection(const Store& store, const std::string& baseline, int64_t run);
std::string historySection(const Store& store, const std::string& experiment);

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
