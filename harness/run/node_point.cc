#include "synk/harness/run/node_point.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "synk/cluster/launch_env.h"
#include "synk/harness/base/child.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"
#include "synk/harness/run/outcome.h"
#include "synk/harness/run/runner.h"

namespace synk::harness {
namespace {

constexpr const char* kNodeLinePrefix = "synk-bench-node: ";

// The experiment's text goes hex-encoded: one word of [0-9a-f] that no launcher re-splits,
// quotes or mangles on its way to another node (newlines, '#', quotes in the file).
std::string toHex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string fromHex(const std::string& hex) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) throw BadInput("--experiment: not hex (odd length)");
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = value(hex[i]), low = value(hex[i + 1]);
    if (high < 0 || low < 0) throw BadInput("--experiment: not hex");
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

// Whole or not at all: the sweeping process may look while the launcher is being torn down.
void writeReport(const std::string& path, const JobOutcome& outcome) {
  const std::string part = path + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << encodeOutcome(outcome);
    if (!out.flush()) throw RunFailed("cannot write the report to " + part);
  }
  std::filesystem::rename(part, path);
}

// This repetition on this node: the point, checked against the launch that started it.
JobOutcome runHere(const NodePointArgs& args, int processes) {
  const Experiment e = parseExperiment(args.experiment_text, args.origin, args.overrides);
  // Skips and keys are the sweep's business: no limits here (a node never skips its point).
  const Plan plan = makePlan(e, MachineLimits{.cpus = INT_MAX, .gpus = INT_MAX}, "");
  if (args.point < 0 || args.point >= static_cast<int>(plan.points.size())) {
    throw BadInput("the experiment has no point " + std::to_string(args.point));
  }
  const Point& point = plan.points[static_cast<size_t>(args.point)];
  if (point.nodes != processes) {
    throw BadInput(describeSetting(e, "experiment.launch", e.launch) + ": it started " +
                   std::to_string(processes) + " synk-bench process(es) for a point of " +
                   std::to_string(point.nodes) + " node(s): start one per node ({nodes})");
  }
  StopWord stop;
  installStopHandlers(&stop);  // the launcher's SIGINT or SIGTERM: finish the step, close
  JobOutcome outcome = runTrainRepetition(e, point, args.repetition, args.plugin, stop);
  installStopHandlers(nullptr);
  return outcome;
}

}  // namespace

std::vector<std::string> NodePointArgs::toArgs() const {
  std::vector<std::string> out = {"--experiment", toHex(experiment_text), "--origin", origin};
  for (const std::string& o : overrides) {
    out.push_back("--set");
    out.push_back(o);
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, std::string>{"--point", std::to_string(point)},
        {"--repetition", std::to_string(repetition)},
        {"--plugin", plugin},
        {"--outcome", outcome}}) {
    out.push_back(flag);
    out.push_back(value);
  }
  return out;
}

NodePointArgs NodePointArgs::parse(const std::vector<std::string>& args) {
  NodePointArgs a;
  auto number = [](const std::string& flag, const std::string& text) {
    try {
      size_t used = 0;
      const int v = std::stoi(text, &used);
      if (used == text.size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw BadInput(flag + " '" + text + "' is not a count");
  };
  for (size_t i = 0; i < args.size(); i += 2) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size()) throw BadInput(flag + " needs a value");
    const std::string& value = args[i + 1];
    if (flag == "--experiment") {
      a.experiment_text = fromHex(value);
    } else if (flag == "--origin") {
      a.origin = value;
    } else if (flag == "--set") {
      a.overrides.push_back(value);
    } else if (flag == "--point") {
      a.point = number(flag, value);
    } else if (flag == "--repetition") {
      a.repetition = number(flag, value);
    } else if (flag == "--plugin") {
      a.plugin = value;
    } else if (flag == "--outcome") {
      a.outcome = value;
    } else {
      throw BadInput("unknown argument '" + flag + "' (node-point is started by synk-bench run)");
    }
  }
  if (a.outcome.empty() || a.plugin.empty()) throw BadInput("--outcome and --plugin are needed");
  return a;
}

int runNodePoint(const NodePointArgs& args) {
  int node = 0, processes = 1;
  std::string launch_error;
  try {
    if (const auto launch = cluster::whoLaunched(cluster::processEnvironment())) {
      node = launch->process;
      processes = launch->processes;
    }
  } catch (const std::exception& error) {
    launch_error = error.what();
  }
  // A launcher killed outright (the repetition's deadline, a second Ctrl-C) must not leave this
  // process running its session: it dies with whatever started it (its node's watcher then
  // removes its shared memory).
  // (The parent is the launcher's daemon, prted or slurmstepd, whose main thread lives as long as
  // it does: PR_SET_PDEATHSIG fires when the parent thread exits.)
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;  // it is gone already (re-parented to init or a subreaper)
  // First, in one write: the sweeping process learns this node's host and process from it,
  // through the launcher's output, and where this host is the sweep's, from a file beside the
  // report too (a killed launcher may not have passed its output on).
  const std::string line = nodeLineText({node, getpid(), hostName()});
  writeAll(STDOUT_FILENO, line);
  std::ofstream(args.outcome + ".node-" + std::to_string(node)) << line;
  JobOutcome outcome;
  try {
    if (!launch_error.empty()) throw BadInput("the launch: " + launch_error);
    outcome = runHere(args, processes);
  } catch (const std::exception& error) {
    outcome = {};
    outcome.status = PointStatus::failed;
    outcome.message = error.what();
  }
  if (node != 0) {  // fork() returned here, so this node never joined (its reason, for the log)
    std::string why = outcome.message;
    for (const PointOutcome& p : outcome.points)
      why += p.message;
    std::fprintf(stderr, "synk-bench node-point: node %d: %s\n", node, why.c_str());
    return 1;
  }
  writeReport(args.outcome, outcome);
  return 0;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string startedAsOneOfSeveral() {
  try {
    const auto launch = cluster::whoLaunched(cluster::processEnvironment());
    if (!launch || launch->processes <= 1) return "";
    return std::string(cluster::launcherName(launch->launcher)) + " process " +
           std::to_string(launch->process) + " of " + std::to_string(launch->processes);
  } catch (const std::exception& error) {  // malformed variables: fork() would refuse them too
    return error.what();
  }
}

std::string nodeLineText(const NodeLine& line) {
  return kNodeLinePrefix + std::to_string(line.node) + " " + std::to_string(line.pid) + " " +
         line.host + "\n";
}

std::vector<NodeLine> parseNodeLines(const std::string& output) {
  std::map<int, NodeLine> nodes;
  std::istringstream in(output);
  std::string text;
  while (std::getline(in, text)) {
    const size_t at = text.find(kNodeLinePrefix);  // a launcher may prefix its tasks' lines
    if (at == std::string::npos) continue;
    std::istringstream fields(text.substr(at + std::string(kNodeLinePrefix).size()));
    NodeLine line;
    if (fields >> line.node >> line.pid >> line.host) nodes.emplace(line.node, line);
  }
  std::vector<NodeLine> out;
  for (auto& [node, line] : nodes)
    out.push_back(line);
  return out;
}

}  // namespace synk::harness
