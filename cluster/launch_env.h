// How synk sees the job launcher that started this process — Open MPI's `mpirun` or Slurm's
// `srun` — read from the variables the launcher exports. It is read before anything forks and
// before MPI is initialised: a session over several nodes has one launcher process per node,
// which forks that node's ranks, and Open MPI advises against fork() after MPI_Init.
// Without a launcher nothing changes: one node, as on one machine.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace synk::cluster {

enum class Launcher { OpenMpi, Slurm };
const char* launcherName(Launcher launcher);

// What the launcher says about this process.
struct LaunchEnv {
  Launcher launcher = Launcher::OpenMpi;
  int processes = 1;     // launcher processes in the job (one per node is what synk wants)
  int process = 0;       // this process's index among them
  int on_this_host = 1;  // launcher processes on this host
  int nodes = -1;        // nodes of the job step (Slurm tells; Open MPI does not: -1)
};

// Looks a variable up; nullptr when unset. Tests pass a map; programs the environment.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup processEnvironment();

// Which launcher started this process and its index among how many processes (nullopt: none),
// reading nothing else: what fork() looks at first, so that a one-process job never fails over
// variables only the layout reads. Throws InvalidArgument when those are malformed.
std::optional<LaunchEnv> whoLaunched(const EnvLookup& env);

// The launcher's view of this process, or nullopt when no launcher started it (a plain
// process; also a program run directly inside an `sbatch` script, outside any `srun` step).
// Throws InvalidArgument naming the variable when one is malformed or contradicts another.
std::optional<LaunchEnv> detectLauncher(const EnvLookup& env);

struct NodeRequest {
  int ranks_per_node = 1;
  int total_ranks = 0;  // 0: nodes x ranks_per_node, whatever it is; else it must match
  // Every launcher process is a node of its own even when several share a host, each with its
  // own shared memory: several "nodes" on one machine (CI). SYNK_SIMULATE_NODES=1.
  bool simulate_nodes = false;
};

// Where this process's ranks sit in the session: nodes are numbered by launcher process, ranks
// node-major (node k holds ranks k * ranks_per_node ... + ranks_per_node - 1), so global rank 0,
// the master, is on node 0.
struct NodeLayout {
  int nodes = 1;
  int node = 0;
  int ranks_per_node = 1;
  int worldRanks() const { return nodes * ranks_per_node; }
  int firstRank() const { return node * ranks_per_node; }
  int globalRank(int local_rank) const { return firstRank() + local_rank; }
  int nodeOf(int global_rank) const { return global_rank / ranks_per_node; }
};

// The layout for `request` under `env` (nullopt: one node). Throws InvalidArgument, before any
// rank forks, when the launch cannot give it: several launcher processes on one host without
// simulate_nodes, a total that nodes x ranks_per_node does not give, a count below one. Each
// message names what to change.
NodeLayout planNodes(const std::optional<LaunchEnv>& env, const NodeRequest& request);

// SYNK_SIMULATE_NODES set to 1 (any other value but 0 or empty is refused with InvalidArgument).
bool simulateNodesRequested(const EnvLookup& env);

// One line: "open-mpi process 1 of 3 (1 on this host): node 1 of 3, ranks 2-3 of 6 (2 per node)".
std::string describe(const std::optional<LaunchEnv>& env, const NodeLayout& layout);

}  // namespace synk::cluster
