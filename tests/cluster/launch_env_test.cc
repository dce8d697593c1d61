// The launcher's variables as mpirun and srun set them (and as they are set wrongly), read into a
// node layout, and the errors a bad launch gets before anything forks.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "synk/cluster/launch_env.h"
#include "synk/core/error.h"

using namespace synk;
using namespace synk::cluster;
using Catch::Contains;

namespace {

EnvLookup mapEnv(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::map<std::string, std::string> openMpi(int size, int rank, int local_size) {
  return {{"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
          {"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local_size)},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}};
}

std::map<std::string, std::string> srunStep(int ntasks, int procid, int nnodes, int nodeid,
                                            std::string tasks_per_node) {
  return {{"SLURM_JOB_ID", "77"},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NTASKS", std::to_string(ntasks)},
          {"SLURM_PROCID", std::to_string(procid)},
          {"SLURM_NNODES", std::to_string(nnodes)},
          {"SLURM_NODEID", std::to_string(nodeid)},
          {"SLURM_STEP_TASKS_PER_NODE", std::move(tasks_per_node)}};
}

}  // namespace

TEST_CASE("no launcher: one node, as on one machine", "[cluster]") {
  const auto env = detectLauncher(mapEnv({{"HOME", "/root"}}));
  CHECK_FALSE(env.has_value());
  const NodeLayout layout = planNodes(env, {.ranks_per_node = 4});
  CHECK(layout.nodes == 1);
  CHECK(layout.worldRanks() == 4);
  CHECK(describe(env, layout) ==
        "no launcher (one node): node 0 of 1, ranks 0-3 of 4 (4 per node)");
}

TEST_CASE("mpirun, one process per node: nodes by process, ranks node-major", "[cluster]") {
  const auto env = detectLauncher(mapEnv(openMpi(3, 2, 1)));
  REQUIRE(env.has_value());
  CHECK(env->launcher == Launcher::OpenMpi);
  const NodeLayout layout = planNodes(env, {.ranks_per_node = 2});
  CHECK(layout.nodes == 3);
  CHECK(layout.node == 2);
  CHECK(layout.firstRank() == 4);
  CHECK(layout.globalRank(1) == 5);
  CHECK(layout.nodeOf(5) == 2);
  CHECK(layout.nodeOf(0) == 0);  // the master, global rank 0, is on node 0
  CHECK(describe(env, layout) ==
        "open-mpi process 2 of 3 (1 on this host): node 2 of 3, ranks 4-5 of 6 (2 per node)");
}

TEST_CASE("two launcher processes on one host: refused unless nodes are simulated", "[cluster]") {
  const auto env = detectLauncher(mapEnv(openMpi(2, 1, 2)));
  CHECK_THROWS_WITH(planNodes(env, {.ranks_per_node = 1}),
                    Contains("2 open-mpi processes share this host") &&
                        Contains("mpirun --map-by ppr:1:node") &&
                        Contains("SYNK_SIMULATE_NODES=1"));
  const NodeLayout layout = planNodes(env, {.ranks_per_node = 1, .simulate_nodes = true});
  CHECK(layout.nodes == 2);
  CHECK(layout.node == 1);
}

TEST_CASE("srun step: tasks per node read from Slurm's compressed list", "[cluster]") {
  // 2 tasks on each of the first 3 nodes, then 1: node 3 has one task, node 1 two.
  const auto alone = detectLauncher(mapEnv(srunStep(7, 6, 4, 3, "2(x3),1")));
  REQUIRE(alone.has_value());
  CHECK(alone->launcher == Launcher::Slurm);
  CHECK(alone->on_this_host == 1);
  CHECK(alone->nodes == 4);
  const auto shared = detectLauncher(mapEnv(srunStep(7, 2, 4, 1, "2(x3),1")));
  CHECK(shared->on_this_host == 2);
  CHECK_THROWS_WITH(planNodes(shared, {}), Contains("srun --ntasks-per-node=1"));
  const auto one_each = detectLauncher(mapEnv(srunStep(2, 1, 2, 1, "1(x2)")));
  const NodeLayout layout = planNodes(one_each, {.ranks_per_node = 8});
  CHECK(layout.node == 1);
  CHECK(layout.worldRanks() == 16);
}

TEST_CASE("an sbatch script outside any srun step is not a launch", "[cluster]") {
  auto vars = srunStep(4, 0, 2, 0, "2(x2)");
  vars.erase("SLURM_STEP_ID");
  CHECK_FALSE(detectLauncher(mapEnv(vars)).has_value());
}

TEST_CASE("mpirun's variables win inside a Slurm allocation", "[cluster]") {
  auto vars = srunStep(4, 3, 2, 1, "2(x2)");
  for (const auto& [k, v] : openMpi(2, 0, 1))
    vars[k] = v;
  const auto env = detectLauncher(mapEnv(vars));
  REQUIRE(env.has_value());
  CHECK(env->launcher == Launcher::OpenMpi);
  CHECK(env->process == 0);
}

TEST_CASE("malformed launcher variables are named", "[cluster]") {
  auto bad_rank = openMpi(2, 0, 1);
  bad_rank["OMPI_COMM_WORLD_RANK"] = std::to_string(2);  // (a literal trips GCC 12 -Wrestrict)
  CHECK_THROWS_WITH(detectLauncher(mapEnv(bad_rank)),
                    Contains("OMPI_COMM_WORLD_RANK=2") && Contains("OMPI_COMM_WORLD_SIZE=2"));
  auto not_number = openMpi(2, 0, 1);
  not_number["OMPI_COMM_WORLD_SIZE"] = "2x";
  CHECK_THROWS_WITH(detectLauncher(mapEnv(not_number)),
                    Contains("OMPI_COMM_WORLD_SIZE='2x' is not a count"));
  auto missing = openMpi(2, 0, 1);
  missing.erase("OMPI_COMM_WORLD_RANK");
  CHECK_THROWS_WITH(detectLauncher(mapEnv(missing)), Contains("OMPI_COMM_WORLD_RANK is unset"));
  CHECK_THROWS_WITH(detectLauncher(mapEnv(srunStep(2, 0, 2, 0, "1(x"))),
                    Contains("SLURM_STEP_TASKS_PER_NODE") && Contains("'1(x'"));
  CHECK_THROWS_WITH(detectLauncher(mapEnv(srunStep(3, 2, 2, 1, "1"))),
                    Contains("lists 1 node(s); this is node 1"));
  CHECK_THROWS_WITH(detectLauncher(mapEnv(srunStep(2, 0, 2, 2, "1(x2)"))),
                    Contains("SLURM_NODEID=2") && Contains("SLURM_NNODES=2"));
}

TEST_CASE("a total the launch cannot give is refused with what to change", "[cluster]") {
  const auto env = detectLauncher(mapEnv(openMpi(2, 0, 1)));
  CHECK_THROWS_WITH(planNodes(env, {.ranks_per_node = 4, .total_ranks = 6}),
                    Contains("asked for 6 ranks, but 2 node(s) x 4 rank(s) per node make 8") &&
                        Contains("a node count that divides it"));
  CHECK_THROWS_WITH(planNodes(env, {.ranks_per_node = 4, .total_ranks = 12}),
                    Contains("or launch 3 node(s)"));
  CHECK(planNodes(env, {.ranks_per_node = 4, .total_ranks = 8}).worldRanks() == 8);
  CHECK_THROWS_WITH(planNodes(env, {.ranks_per_node = 0}), Contains("at least 1, got 0"));
}

TEST_CASE("whoLaunched reads only which launcher and how many processes", "[cluster]") {
  CHECK_FALSE(whoLaunched(mapEnv({})).has_value());
  const auto two = whoLaunched(mapEnv(openMpi(2, 1, 1)));
  REQUIRE(two.has_value());
  CHECK(two->launcher == Launcher::OpenMpi);
  CHECK(two->processes == 2);
  CHECK(two->process == 1);
  // A variable only the layout reads, malformed: the whole view refuses it, this does not.
  auto step = srunStep(2, 1, 2, 1, "1(x2)");
  step["SLURM_NODEID"] = std::string(1, 'x');  // (a literal here trips GCC 12's -Wrestrict)
  CHECK(whoLaunched(mapEnv(step))->processes == 2);
  CHECK_THROWS_AS(detectLauncher(mapEnv(step)), InvalidArgument);
  auto wrong = openMpi(2, 1, 1);
  wrong["OMPI_COMM_WORLD_RANK"] = std::to_string(2);
  CHECK_THROWS_WITH(whoLaunched(mapEnv(wrong)), Contains("OMPI_COMM_WORLD_RANK=2"));
}

TEST_CASE("SYNK_SIMULATE_NODES takes 1 or 0", "[cluster]") {
  CHECK_FALSE(simulateNodesRequested(mapEnv({})));
  CHECK_FALSE(simulateNodesRequested(mapEnv({{"SYNK_SIMULATE_NODES", "0"}})));
  CHECK(simulateNodesRequested(mapEnv({{"SYNK_SIMULATE_NODES", "1"}})));
  CHECK_THROWS_WITH(simulateNodesRequested(mapEnv({{"SYNK_SIMULATE_NODES", "yes"}})),
                    Contains("SYNK_SIMULATE_NODES='yes'"));
}
