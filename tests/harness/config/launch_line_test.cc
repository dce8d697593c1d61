// harness/config/launch_line.h and the keys that use it: experiment.launch and axes.nodes, what
// they mean and every refusal, each naming where the bad value was set.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "synk/harness/base/errors.h"
#include "synk/harness/config/config.h"
#include "synk/harness/config/launch_line.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::TempDir;

namespace {

const char* kLaunched = R"ini([experiment]
plugin = synk_bench_toy
function = train_step
launch = mpirun --oversubscribe -np {nodes} -x SYNK_SIMULATE_NODES=1
[input.x]
shape = batch, 4
[axes]
nodes = 1, 2
ranks = 1
)ini";

std::string errorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parseExperiment(text, "t.ini", sets);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a launch line: words, quotes, placeholders, the program", "[harness]") {
  const LaunchLine line = LaunchLine::parse(
      "env A=1 srun -N {nodes} --ntasks-per-node=1 -c '{ranks_per_node}' \"x y\"");
  CHECK(line.program() == "srun");
  CHECK(line.expand(3, 4) == std::vector<std::string>{"env", "A=1", "srun", "-N", "3",
                                                      "--ntasks-per-node=1", "-c", "4", "x y"});
  CHECK(LaunchLine::parse("mpirun -np {nodes}").program() == "mpirun");
  CHECK(LaunchLine::parse("/usr/bin/mpirun -np={nodes}").expand(2, 1)[1] == "-np=2");
  CHECK_THROWS_WITH(LaunchLine::parse("mpirun -np 2"), Catch::Contains("has no {nodes}"));
  CHECK_THROWS_WITH(
      LaunchLine::parse("mpirun -np {nodes} -c {cores}"),
      Catch::Contains("'{cores}': the placeholders are {nodes} and {ranks_per_node}"));
  CHECK_THROWS_WITH(LaunchLine::parse("mpirun -np {nodes} 'x"), Catch::Contains("unclosed '"));
  CHECK_THROWS_WITH(LaunchLine::parse("   "), Catch::Contains("needs the launcher's command line"));
  CHECK_THROWS_WITH(LaunchLine::parse("env A={nodes}"), Catch::Contains("names no program"));
}

TEST_CASE("a launcher is looked for on PATH, or as the path given", "[harness]") {
  TempDir dir;
  const std::string tool = dir.file("launch-me");
  std::ofstream(tool) << "#!/bin/sh\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  std::filesystem::create_directory(dir.file("a-folder"));
  const std::string path = "/no/such:" + dir.path().string();
  CHECK(findProgram("launch-me", path) == tool);
  CHECK(findProgram(tool, "") == tool);
  CHECK_FALSE(findProgram("no-such-launcher", path));
  CHECK_FALSE(findProgram("a-folder", path));  // a folder is not a program
  CHECK_FALSE(findProgram("/no/such/mpirun", path));
}

TEST_CASE("experiment.launch and axes.nodes: read, kept in the resolved config", "[harness]") {
  const Experiment e = parseExperiment(kLaunched, "t.ini");
  CHECK(e.launch == "mpirun --oversubscribe -np {nodes} -x SYNK_SIMULATE_NODES=1");
  CHECK(e.axes.nodes == std::vector<int64_t>{1, 2});
  CHECK(e.canonical().find("axes.nodes = 1,2\n") != std::string::npos);
  CHECK(e.canonical().find("experiment.launch = mpirun --oversubscribe") != std::string::npos);
  // Without a launch line nothing changes in the resolved config (earlier runs' keys stay).
  const Experiment plain = parseExperiment(
      "[experiment]\nplugin = p\nfunction = f\n[input.x]\nshape = batch\n", "t.ini");
  CHECK(plain.launch.empty());
  CHECK(plain.canonical().find("nodes") == std::string::npos);
  // --set a launch line with blanks, as a command line gives it.
  const Experiment srun =
      parseExperiment(kLaunched, "t.ini", {"experiment.launch=srun -N {nodes} --mpi=pmix"});
  CHECK(srun.launch == "srun -N {nodes} --mpi=pmix");
}

TEST_CASE("launch refusals name the file, the line and the key", "[harness]") {
  const std::string no_launch =
      "[experiment]\nplugin = p\nfunction = f\n[input.x]\nshape = batch\n[axes]\nnodes = 1, 2\n";
  CHECK(errorOf(no_launch) ==
        "t.ini:7: axes.nodes needs experiment.launch, the launcher's line that starts a point on "
        "{nodes} nodes (e.g. launch = mpirun -np {nodes} --map-by ppr:1:node)");
  CHECK(errorOf(no_launch, {"axes.nodes=2"}).rfind("--set axes.nodes=2: axes.nodes needs", 0) == 0);
  CHECK_THAT(errorOf(kLaunched, {"experiment.launch=mpirun -np 2"}),
             Catch::StartsWith("--set experiment.launch=mpirun -np 2: experiment.launch = "
                               "'mpirun -np 2': has no {nodes}"));
  std::string fixed = kLaunched;
  fixed.replace(fixed.find("{nodes}"), 7, "2");
  CHECK_THAT(errorOf(fixed), Catch::StartsWith("t.ini:4: experiment.launch = 'mpirun "
                                               "--oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1': "
                                               "has no {nodes}"));
  CHECK(errorOf(kLaunched, {"axes.nodes=0,1"}) ==
        "--set axes.nodes=0,1: axes.nodes = '0,1': value 0 in '0,1' is below 1");
  CHECK_THAT(errorOf(kLaunched, {"axes.nodes="}), Catch::Contains("at least one value"));
  CHECK_THAT(errorOf("[experiment]\nkind = collectives\nlaunch = mpirun -np {nodes}\n"),
             Catch::StartsWith("t.ini:3: experiment.launch = 'mpirun -np {nodes}': collectives "
                               "over several nodes are not built in synk-bench yet"));
}
