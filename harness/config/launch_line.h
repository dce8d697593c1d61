#pragma once
// experiment.launch: the command line that starts a point on several nodes, one synk-bench
// launcher process per node (cluster/README.md), with {nodes} and {ranks_per_node} filled in per
// point; synk-bench appends its own point-running command to it.
//
//   launch = mpirun -np {nodes} --map-by ppr:1:node
//   launch = srun -N {nodes} --ntasks-per-node=1 --mpi=pmix
//   launch = env FOO=1 mpirun --oversubscribe -np {nodes} -x SYNK_SIMULATE_NODES=1
//
// Words are split at blanks; '...' and "..." quote (no other shell syntax: no variables, no
// redirection; run through `sh -c` where one is needed). Errors are BadInput without a location:
// the config adds where the line was set.
#include <optional>
#include <string>
#include <vector>

namespace synk::harness {

struct LaunchLine {
  std::vector<std::string> words;  // as written, placeholders unexpanded

  // Throws BadInput: empty, an unclosed quote, no {nodes}, a placeholder other than {nodes} and
  // {ranks_per_node}.
  static LaunchLine parse(const std::string& text);
  // The words with the placeholders replaced.
  std::vector<std::string> expand(int nodes, int ranks_per_node) const;
  // The program that is run: the first word, past `env` and its NAME=VALUE words.
  std::string program() const;
};

// Where `program` is found: itself when it has a '/', else the first executable file of that
// name in `path` (PATH's colon-separated folders); nullopt when none.
std::optional<std::string> findProgram(const std::string& program, const std::string& path);

}  // namespace synk::harness
