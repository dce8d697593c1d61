// synk-bench node-point: one repetition of a launched point on this node (run/node_point.h).
// Hidden from `synk-bench help`: the sweep appends it to experiment.launch, nobody types it.
#include "synk/harness/run/node_point.h"
#include "synk/harness/cli/cli.h"

namespace synk::harness {
namespace {

int nodePointCommand(const std::vector<std::string>& args, const std::string&) {
  return runNodePoint(NodePointArgs::parse(args));
}

}  // namespace

extern const Command kNodePointCommand{
    "node-point", "node-point ARGS (started by synk-bench run through experiment.launch)",
    "one repetition of a point on this node, under the experiment's launcher", nodePointCommand,
    /*hidden=*/true};

}  // namespace synk::harness
