#include "synk/synk.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

#include "synk/cluster/launch_env.h"
#include "synk/collectives/registry.h"
#include "synk/core/error.h"
#include "synk/core/log.h"
#include "synk/core/plugin_search.h"
#include "synk/plugins/host/dll_model_loader.h"
#ifdef SYNK_WITH_MPI
#include "synk/cluster/leader_communicator.h"
#include "synk/cluster/node_bridge.h"
#endif

namespace synk {
namespace {

bool independentSessions(const cluster::EnvLookup& env) {
  const char* independent = env("SYNK_INDEPENDENT_SESSIONS");
  return independent != nullptr && std::string_view(independent) == "1";
}

#ifdef SYNK_WITH_MPI
// The bridge (cluster/node_bridge.h) as core's link between nodes.
class BridgeLink : public NodeLink {
 public:
  BridgeLink(ControlBlock& cb, const cluster::NodeLayout& layout)
      : layout_(layout), bridge_(cb, layout) {}
  void stop() override { bridge_.stop(); }
  std::unique_ptr<Communicator> hostCommunicator() override {
    return std::make_unique<cluster::LeaderCommunicator>(bridge_, layout_);
  }

 private:
  cluster::NodeLayout layout_;
  cluster::NodeBridge bridge_;
};

// mpirun binds each process to one core when it starts two or fewer (--bind-to core), and a
// batch system may bind a task to a few: the node's ranks, forked from this launcher, inherit
// its CPUs, and with its bridge thread they would take turns on them (a barrier step over 2
// nodes took 0.43 ms instead of microseconds on a 32-core host). Said before anything forks.
void warnIfBoundNarrowly(const cluster::NodeLayout& layout) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return;
  const int allowed = CPU_COUNT(&cpus);
  const int threads = layout.ranks_per_node + 1;  // the node's ranks and its bridge
  // Narrower than the machine, by a binding: a machine with fewer cores than ranks was asked for.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (allowed >= threads || allowed >= online) return;
  logWarning("node ", layout.node, ": this launcher may run on ", allowed, " CPU(s), which its ",
             layout.ranks_per_node, " rank(s) and the node's bridge (", threads,
             " busy threads) would share: start it with `mpirun --bind-to none` (or "
             "`--map-by ppr:1:node:PE=",
             threads, "`; srun: `--cpus-per-task=", threads, "`)");
}

// One session over the launcher's processes, a node each: this one forks its node's ranks.
NodeSpan spanNodes(const ForkOptions& options, const BackendRegistry& registry,
                   const std::optional<cluster::LaunchEnv>& launch, const cluster::EnvLookup& env) {
  const BackendFactory* factory = registry.find(options.backend);
  cluster::NodeRequest request;
  request.simulate_nodes = cluster::simulateNodesRequested(env);
  // Simulated nodes of one host split its devices (a GPU is one rank's); cpu ranks share cores.
  const bool split_devices = request.simulate_nodes && factory && factory->bindsDevices();
  const int nodes_on_host = launch ? launch->on_this_host : 1;
  request.ranks_per_node = options.ranks_per_node;
  if (request.ranks_per_node == 0) {  // every device of the backend (cpu: hardware threads)
    request.ranks_per_node = factory ? factory->deviceCount() : 1;
    if (split_devices) request.ranks_per_node = std::max(1, request.ranks_per_node / nodes_on_host);
  }
  request.total_ranks = options.n_parallel;
  cluster::NodeLayout layout;
  try {
    layout = cluster::planNodes(launch, request);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(str("fork: ", e.what()));
  }
  warnIfBoundNarrowly(layout);
  NodeSpan span;
  span.nodes = layout.nodes;
  span.node = layout.node;
  span.ranks_per_node = layout.ranks_per_node;
  span.nodes_on_host = nodes_on_host;
  if (split_devices) {
    // One host's launchers are its simulated nodes (process index = node); each takes its slice.
    // Spread over several hosts, the slices would need each host's own numbering of its nodes.
    if (launch && launch->on_this_host != launch->processes) {
      throw UsageError(
          str("fork: simulated nodes (SYNK_SIMULATE_NODES) of a backend with devices "
              "must all run on one host, but ",
              launch->on_this_host, " of the ", launch->processes,
              " launcher processes are on this one: unset "
              "SYNK_SIMULATE_NODES on a cluster (one launcher per node)"));
    }
    span.first_device = (layout.node % nodes_on_host) * layout.ranks_per_node;
    // NCCL tells nodes apart by a host hash: one per simulated node makes it take its path
    // between nodes (the network transport) as on separate machines. Set before anything
    // forks or starts a thread (fork() runs only before threads); a user's own value is kept,
    // and the value stays set in this process (a later NCCL communicator here sees it too).
    const std::string host_id = str("synk-simulated-node-", layout.node);
    setenv("NCCL_HOSTID", host_id.c_str(), 0);
  }
  span.start_link = [layout](ControlBlock& cb) -> std::unique_ptr<NodeLink> {
    return std::make_unique<BridgeLink>(cb, layout);
  };
  return span;
}
#endif

}  // namespace

Session fork(const ForkOptions& options) {
  const cluster::EnvLookup env = cluster::processEnvironment();
  const std::optional<cluster::LaunchEnv> launch = cluster::whoLaunched(env);
  BackendRegistry registry = makeDefaultRegistry();
  auto loader = std::make_shared<DllModelLoader>();
  if (!launch || launch->processes == 1 || independentSessions(env)) {
    return forkSession(options, std::move(registry), std::move(loader));
  }
#ifdef SYNK_WITH_MPI
  const NodeSpan span = spanNodes(options, registry, cluster::detectLauncher(env), env);
  return forkSession(options, std::move(registry), std::move(loader), span);
#else
  throw UsageError(
      str("fork: this process is ", cluster::launcherName(launch->launcher), " process ",
          launch->process, " of ", launch->processes,
          ": a session over several nodes needs synk built with Open MPI (libopenmpi-dev; "
          "cluster/README.md), and this one was built without it. Rebuild with it, run the program "
          "once per machine without a launcher, or set SYNK_INDEPENDENT_SESSIONS=1 to run "
          "independent sessions on purpose"));
#endif
}

std::string pluginPath(const std::string& name) {
  return findPlugin(name);
}

}  // namespace synk
