// synk-bench: the experiment harness (harness/README.md). main() only hands the command line to
// the CLI (cli.h).
#include "synk/harness/cli/cli.h"

int main(int argc, char** argv) {
  return synk::harness::runCli(argc, argv);
}
