#include "synk/harness/cli/cli.h"

#include <boost/program_options/errors.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>
#include <cstdio>
#include <iostream>

#include "synk/harness/base/errors.h"
#include "synk/harness/cli/cli_commands.h"
#include "synk/harness/plan/context.h"

namespace synk::harness {
namespace {

namespace po = boost::program_options;

// Quotes an argument the way a shell would need it, for the stored command line.
std::string shellQuoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;!#~") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void printHelp(std::FILE* out) {
  std::fprintf(out,
               "usage: synk-bench COMMAND [options]   (synk-bench COMMAND --help for its options;\n"
               "       synk-bench --version)\n\n"
               "commands:\n");
  for (const Command& c : commands()) {
    if (!c.hidden) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  }
  std::fprintf(out,
               "\nexit codes: 0 ok, 2 bad input, 3 a run failed or is incomplete "
               "(failed, wrong or unfinished points); compare: 1 a regression, 3 incomparable\n");
}

}  // namespace

bool printedHelp(const po::variables_map& values, const po::options_description& options,
                 const char* usage) {
  if (!values.count("help")) return false;
  std::printf("usage: synk-bench %s\n\n", usage);
  options.print(std::cout);
  return true;
}

Scaling parseScaling(const std::string& text, Scaling fallback) {
  if (text.empty()) return fallback;
  if (text == "weak") return Scaling::Weak;
  if (text == "strong") return Scaling::Strong;
  throw BadInput("--scaling must be weak or strong, not '" + text + "'");
}

po::variables_map parseArgs(const std::string& command, const std::vector<std::string>& args,
                            const po::options_description& options,
                            const std::vector<std::string>& positional) {
  po::positional_options_description where;
  for (const std::string& name : positional) {
    const bool many = name.size() > 3 && name.ends_with("...");
    where.add(name.substr(0, name.size() - (many ? 3 : 0)).c_str(), many ? -1 : 1);
  }
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(options).positional(where).run(), values);
    po::notify(values);
  } catch (const po::unknown_option& e) {
    // runCli prefixes "synk-bench COMMAND: " to every message.
    throw BadInput(std::string(e.what()) + " (synk-bench " + command +
                   " --help lists its options)");
  } catch (const po::error& e) {
    throw BadInput(e.what());
  }
  return values;
}

int runCli(int argc, char** argv) {
  std::string command_line = "synk-bench";
  for (int i = 1; i < argc; ++i)
    command_line += " " + shellQuoted(argv[i]);
  if (argc < 2) {
    printHelp(stderr);
    return kExitBadInput;
  }
  const std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    printHelp(stdout);
    return kExitOk;
  }
  if (name == "--version" || name == "version" || name == "-V") {
    std::printf("%s\n", versionLine().c_str());
    return kExitOk;
  }
  for (const Command& c : commands()) {
    if (name != c.name) continue;
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
      return c.run(args, command_line);
    } catch (const BadInput& e) {
      std::fprintf(stderr, "synk-bench %s: %s\n", c.name, e.what());
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "synk-bench %s: %s\n", c.name, e.what());
      return kExitRunFailed;
    }
  }
  std::fprintf(stderr, "synk-bench: unknown command '%s'\n\n", name.c_str());
  printHelp(stderr);
  return kExitBadInput;
}

}  // namespace synk::harness
