#include "synk/cluster/launch_env.h"

#include <charconv>
#include <cstdlib>
#include <vector>

#include "synk/core/error.h"

namespace synk::cluster {
namespace {

// The variable as a whole non-negative number; nullopt when unset.
std::optional<int> number(const EnvLookup& env, const char* name) {
  const char* text = env(name);
  if (text == nullptr) return std::nullopt;
  const std::string_view s(text);
  int value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0) {
    throw InvalidArgument(str("launcher variable ", name, "='", s, "' is not a count"));
  }
  return value;
}

int required(const EnvLookup& env, const char* name, const char* launcher) {
  const std::optional<int> value = number(env, name);
  if (!value) throw InvalidArgument(str(launcher, " started this process but ", name, " is unset"));
  return *value;
}

// Slurm's compressed tasks-per-node list, "2(x3),1": 2 tasks on each of the first 3 nodes, then
// 1. Returns the count for node `node`.
int tasksOnNode(const char* name, std::string_view list, int node) {
  int first = 0;  // the first node the current entry covers
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view entry = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    int tasks = 0, repeat = 1;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), tasks);
    std::string_view rest(end, entry.data() + entry.size() - end);
    bool ok = ec == std::errc() && tasks > 0;
    if (ok && !rest.empty()) {
      ok = rest.size() > 3 && rest.substr(0, 2) == "(x" && rest.back() == ')';
      if (ok) {
        const auto [e2, ec2] =
            std::from_chars(rest.data() + 2, rest.data() + rest.size() - 1, repeat);
        ok = ec2 == std::errc() && e2 == rest.data() + rest.size() - 1 && repeat > 0;
      }
    }
    if (!ok) throw InvalidArgument(str("launcher variable ", name, ": cannot read '", entry, "'"));
    if (node < first + repeat) return tasks;
    first += repeat;
  }
  throw InvalidArgument(
      str("launcher variable ", name, " lists ", first, " node(s); this is node ", node));
}

void checkIndex(const LaunchEnv& e, const char* size_name, const char* rank_name) {
  if (e.processes < 1 || e.process >= e.processes) {
    throw InvalidArgument(str("launcher variables disagree: ", rank_name, "=", e.process, " but ",
                              size_name, "=", e.processes));
  }
}

}  // namespace

const char* launcherName(Launcher launcher) {
  return launcher == Launcher::OpenMpi ? "open-mpi" : "slurm";
}

EnvLookup processEnvironment() {
  return [](const char* name) { return static_cast<const char*>(std::getenv(name)); };
}

std::optional<LaunchEnv> whoLaunched(const EnvLookup& env) {
  // mpirun's children carry OMPI_COMM_WORLD_*; inside a Slurm allocation they also inherit the
  // allocation's SLURM_* variables, so Open MPI's are read first.
  if (env("OMPI_COMM_WORLD_SIZE") != nullptr) {
    LaunchEnv e;
    e.launcher = Launcher::OpenMpi;
    e.processes = required(env, "OMPI_COMM_WORLD_SIZE", "mpirun");
    e.process = required(env, "OMPI_COMM_WORLD_RANK", "mpirun");
    checkIndex(e, "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK");
    return e;
  }
  // An srun step; an sbatch script itself has the job's variables but no step: not launched.
  const bool in_step = env("SLURM_STEP_ID") != nullptr || env("SLURM_STEPID") != nullptr;
  if (in_step && env("SLURM_PROCID") != nullptr) {
    LaunchEnv e;
    e.launcher = Launcher::Slurm;
    const char* ntasks = env("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    e.processes = required(env, ntasks, "srun");
    e.process = required(env, "SLURM_PROCID", "srun");
    checkIndex(e, ntasks, "SLURM_PROCID");
    return e;
  }
  return std::nullopt;
}

std::optional<LaunchEnv> detectLauncher(const EnvLookup& env) {
  std::optional<LaunchEnv> e = whoLaunched(env);
  if (!e) return e;
  if (e->launcher == Launcher::OpenMpi) {
    e->on_this_host = number(env, "OMPI_COMM_WORLD_LOCAL_SIZE").value_or(1);
    return e;
  }
  const char* nnodes = env("SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES";
  e->nodes = required(env, nnodes, "srun");
  const int node = required(env, "SLURM_NODEID", "srun");
  if (e->nodes < 1 || node >= e->nodes) {
    throw InvalidArgument(
        str("launcher variables disagree: SLURM_NODEID=", node, " but ", nnodes, "=", e->nodes));
  }
  const char* per_node =
      env("SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
  if (const char* list = env(per_node)) e->on_this_host = tasksOnNode(per_node, list, node);
  return e;
}

bool simulateNodesRequested(const EnvLookup& env) {
  const char* value = env("SYNK_SIMULATE_NODES");
  if (value == nullptr || std::string_view(value).empty() || std::string_view(value) == "0") {
    return false;
  }
  if (std::string_view(value) == "1") return true;
  throw InvalidArgument(str("SYNK_SIMULATE_NODES='", value,
                            "': use 1 (each launcher process a node "
                            "of its own) or 0"));
}

NodeLayout planNodes(const std::optional<LaunchEnv>& env, const NodeRequest& request) {
  if (request.ranks_per_node < 1) {
    throw InvalidArgument(str("ranks per node must be at least 1, got ", request.ranks_per_node));
  }
  NodeLayout layout;
  layout.ranks_per_node = request.ranks_per_node;
  if (env) {
    if (env->on_this_host > 1 && !request.simulate_nodes) {
      const bool mpi = env->launcher == Launcher::OpenMpi;
      throw InvalidArgument(
          str(env->on_this_host, " ", launcherName(env->launcher),
              " processes share this host, but synk wants one per node (it forks that node's ranks "
              "itself): launch with ",
              mpi ? "`mpirun --map-by ppr:1:node`" : "`srun --ntasks-per-node=1`",
              ", or set SYNK_SIMULATE_NODES=1 to make each process a node of its own on one host"));
    }
    layout.nodes = env->processes;
    layout.node = env->process;
  }
  if (request.total_ranks != 0 && request.total_ranks != layout.worldRanks()) {
    throw InvalidArgument(str("asked for ", request.total_ranks, " ranks, but ", layout.nodes,
                              " node(s) x ", layout.ranks_per_node, " rank(s) per node make ",
                              layout.worldRanks(), ": ask for 0 (every rank the launch gives) or ",
                              layout.worldRanks(), ", or launch ",
                              request.total_ranks % layout.ranks_per_node == 0
                                  ? str(request.total_ranks / layout.ranks_per_node, " node(s)")
                                  : std::string("a node count that divides it")));
  }
  return layout;
}

std::string describe(const std::optional<LaunchEnv>& env, const NodeLayout& layout) {
  std::string who = "no launcher (one node)";
  if (env) {
    who = str(launcherName(env->launcher), " process ", env->process, " of ", env->processes, " (",
              env->on_this_host, " on this host)");
  }
  return str(who, ": node ", layout.node, " of ", layout.nodes, ", ranks ", layout.firstRank(), "-",
             layout.firstRank() + layout.ranks_per_node - 1, " of ", layout.worldRanks(), " (",
             layout.ranks_per_node, " per node)");
}

}  // namespace synk::cluster
