// synk-launch-info: how synk sees this process's launch (mpirun, srun, or none) and where its
// ranks would sit; run it under the same launcher line as the program to check an sbatch script
// or an mpirun mapping before a job spends its allocation.
//   mpirun --map-by ppr:1:node synk-launch-info --ranks-per-node 4
#include <boost/program_options.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "synk/cluster/launch_env.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  po::options_description options(
      "synk-launch-info: how synk sees this launch (one line per launcher process)\n"
      "usage: [mpirun ... | srun ...] synk-launch-info [--ranks-per-node N] [--ranks N]");
  options.add_options()("help,h", "this text")("ranks-per-node", po::value<int>()->default_value(1),
                                               "ranks each node forks")(
      "ranks", po::value<int>()->default_value(0), "total ranks asked for (0: whatever it gives)");
  try {
    po::variables_map args;
    po::store(po::parse_command_line(argc, argv, options), args);
    po::notify(args);
    if (args.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    const auto env = synk::cluster::processEnvironment();
    const auto launch = synk::cluster::detectLauncher(env);
    synk::cluster::NodeRequest request;
    request.ranks_per_node = args["ranks-per-node"].as<int>();
    request.total_ranks = args["ranks"].as<int>();
    request.simulate_nodes = synk::cluster::simulateNodesRequested(env);
    const auto layout = synk::cluster::planNodes(launch, request);
    std::printf("%s\n", synk::cluster::describe(launch, layout).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synk-launch-info: %s\n", e.what());
    return 2;
  }
}
