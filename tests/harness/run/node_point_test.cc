// harness/run/node_point.h: what the sweep hands every node (its arguments, read back exactly) and
// the node lines the sweep reads from the launcher's output.
#include <catch2/catch.hpp>

#include "synk/harness/base/errors.h"
#include "synk/harness/run/node_point.h"

using namespace synk::harness;

TEST_CASE("a node's arguments round-trip, the experiment's text byte for byte", "[harness]") {
  NodePointArgs a;
  a.experiment_text = "[experiment]\n# 'quotes' \"and\" {nodes}; $HOME\n\tplugin = p\n\xff";
  a.origin = "experiments/nodes toy.ini";
  a.overrides = {"axes.batch=64", "experiment.launch=mpirun -np {nodes}"};
  a.point = 3;
  a.repetition = 2;
  a.plugin = "/build/lib/libsynk_bench_toy.so";
  a.outcome = "/db/.synk-bench-launch-x/point-3-rep-2.report";
  const std::vector<std::string> args = a.toArgs();
  // One word of hex: nothing a launcher or a shell could split or expand.
  CHECK(args[1].find_first_not_of("0123456789abcdef") == std::string::npos);
  const NodePointArgs b = NodePointArgs::parse(args);
  CHECK(b.experiment_text == a.experiment_text);
  CHECK(b.origin == a.origin);
  CHECK(b.overrides == a.overrides);
  CHECK(b.point == 3);
  CHECK(b.repetition == 2);
  CHECK(b.plugin == a.plugin);
  CHECK(b.outcome == a.outcome);
  CHECK_THROWS_WITH(NodePointArgs::parse({"--frob", "1"}), Catch::Contains("'--frob'"));
  CHECK_THROWS_WITH(NodePointArgs::parse({"--experiment", "zz"}), Catch::Contains("not hex"));
  CHECK_THROWS_WITH(NodePointArgs::parse({"--point", "-1"}), Catch::Contains("not a count"));
  CHECK_THROWS_WITH(NodePointArgs::parse({"--point"}), Catch::Contains("needs a value"));
  CHECK_THROWS_AS(NodePointArgs::parse({}), BadInput);
}

TEST_CASE("node lines: found among the launcher's output, by node, prefixed or not", "[harness]") {
  const std::string output = "mpirun: a warning\n" + nodeLineText({1, 4242, "node-b"}) +
                             "[1,0]<stdout>:" + nodeLineText({0, 17, "node-a"}) +
                             "synk-bench-node: garbled\n" + nodeLineText({1, 99, "later"});
  const std::vector<NodeLine> lines = parseNodeLines(output);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].node == 0);
  CHECK(lines[0].pid == 17);
  CHECK(lines[0].host == "node-a");
  CHECK(lines[1].node == 1);
  CHECK(lines[1].pid == 4242);  // the first line of a node counts
  CHECK(lines[1].host == "node-b");
  CHECK(parseNodeLines("nothing here\n").empty());
  CHECK_FALSE(hostName().empty());
}
