#pragma once
// The synk-bench command line: `synk-bench COMMAND [options]`, dispatched from one table
// (cli.cc). Adding a command is one row there plus its function (declared in
// cli_commands.h). Exit codes: 0 ok, 2 bad input (config, command line, database), 3 a run
// that failed or is incomplete (failed, wrong or unfinished points, a full disk); compare adds
// 1, a regression (and 3 means an incomplete or incomparable compare).
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
};

const std::vector<Command>& commands();

int runCli(int argc, char** argv);

}  // namespace synk::harness
