#pragma once
// The synk-bench command line: `synk-bench COMMAND [options]`, dispatched from one table,
// commands(). Adding a command is one file, commands/NAME.cc, that defines its row
// (`extern const Command kNameCommand{...}`), and one line, NAME in SYNK_BENCH_COMMANDS
// (cli/CMakeLists.txt), from which CMake writes the table (command_table.cc.in). Exit codes: 0 ok,
// 2 bad input (config, command line, database), 3 a run that failed or is incomplete (failed, wrong
// or unfinished points, a full disk); compare adds 1, a regression (and 3 means an incomplete or
// incomparable compare).
#include <string>
#include <vector>

namespace synk::harness {

// A command gets its arguments (after its name) and the whole command line (stored with runs).
using CommandFunction = int (*)(const std::vector<std::string>& args,
                                const std::string& command_line);

struct Command {
  const char* name;
  const char* usage;    // "run EXPERIMENT.ini [--db PATH] ..."
  const char* summary;  // one line for `synk-bench help`
  CommandFunction run;
  bool hidden = false;  // not listed by `synk-bench help`: a mode synk-bench starts itself
};

// Every command, in SYNK_BENCH_COMMANDS's order (`synk-bench help` lists them so).
const std::vector<Command>& commands();

int runCli(int argc, char** argv);

}  // namespace synk::harness
