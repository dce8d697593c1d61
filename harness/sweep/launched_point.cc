#include "synk/harness/sweep/launched_point.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synk/core/shm_segment.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/base/strings.h"

namespace synk::harness {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of the launcher's output that say something (not node lines, not rules of dashes),
// the first two and the last two, for a failed point's reason: mpirun says what went wrong
// first, a program's error comes last.
std::string outputTail(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.find("synk-bench-node: ") != std::string::npos) continue;
    if (line.find_first_not_of(" \t-=*") == std::string::npos) continue;
    lines.push_back(line);
  }
  if (lines.size() > 4) lines.erase(lines.begin() + 2, lines.end() - 2), lines[1] += " ...";
  std::string tail;
  for (const std::string& line : lines)
    tail += (tail.empty() ? "" : " / ") + std::string(trim(line));
  if (tail.size() > 600) tail = tail.substr(0, 600) + " ...";
  return tail.empty() ? "no output" : tail;
}

// Whether `pid` is still a node process of this repetition: its command line holds the report's
// path, which no other process's does (a pid reused since is left alone).
bool stillOurs(int64_t pid, const std::string& token) {
  const std::string cmdline = readFile("/proc/" + std::to_string(pid) + "/cmdline");
  return cmdline.find(token) != std::string::npos;
}

// Node processes of this host the launcher left behind (it was killed, or lost them): killed by
// pid, then the shared memory named after them removed, as runChild does for a killed group.
void endLeftovers(const std::vector<NodeLine>& nodes, const std::string& token) {
  const std::string here = hostName();
  for (const NodeLine& node : nodes) {
    if (node.host != here || node.pid <= 0) continue;
    const auto pid = static_cast<pid_t>(node.pid);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (stillOurs(pid, token) && std::chrono::steady_clock::now() < give_up) {
      kill(pid, SIGKILL);
      usleep(1000);
    }
    // Only a pid that is gone: one reused since by another process may lead a live session.
    if (kill(pid, 0) != 0 && errno == ESRCH) removeSegmentsWithPrefix(processShmPrefix(pid));
  }
}

std::string hostsOf(const std::vector<NodeLine>& nodes, int count) {
  std::vector<std::string> hosts(static_cast<size_t>(std::max(count, 0)), "?");
  for (const NodeLine& n : nodes) {
    if (n.node >= 0 && n.node < count) hosts[static_cast<size_t>(n.node)] = n.host;
  }
  std::string out;
  for (const std::string& h : hosts)
    out += (out.empty() ? "" : ",") + h;
  return out;
}

}  // namespace

LaunchFolder::LaunchFolder(const std::string& beside_file) {
  std::filesystem::path folder = std::filesystem::path(beside_file).parent_path();
  if (folder.empty()) folder = ".";
  std::string pattern = (folder / ".synk-bench-launch-XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    throw RunFailed("cannot create a folder for the launched points' reports in " +
                    folder.string());
  }
  path_ = std::filesystem::absolute(pattern).string();
}

LaunchFolder::~LaunchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string selfExecutable() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw RunFailed("cannot find synk-bench's own path: " + error.message());
  return self.string();
}

LaunchedRepetition runLaunchedRepetition(const Experiment& e, const Point& point, int repetition,
                                         const std::string& plugin, const LaunchFolder& folder,
                                         const StopWord& stop, std::chrono::milliseconds deadline,
                                         const std::function<void()>& tick) {
  const std::string name = folder.path() + "/point-" + std::to_string(point.index) + "-rep-" +
                           std::to_string(repetition);
  NodePointArgs args;
  args.experiment_text = e.text;
  args.origin = e.file;
  args.overrides = e.overrides;
  args.point = point.index;
  args.repetition = repetition;
  args.plugin = plugin;
  args.outcome = name + ".report";
  const LaunchLine launch = LaunchLine::parse(e.launch);
  SpawnRequest request;
  request.argv = launch.expand(point.nodes, point.ranks_per_node);
  request.argv.push_back(selfExecutable());
  request.argv.push_back("node-point");
  for (std::string& a : args.toArgs())
    request.argv.push_back(std::move(a));
  request.output_file = name + ".log";
  request.deadline = deadline;
  request.stop = &stop;
  // The launcher has no stop word: a signal is its Ctrl-C. SIGTERM, not SIGINT: srun takes one
  // SIGINT as a request for the job's status (a second within a second cancels it), while it
  // passes SIGTERM on to its tasks; mpirun ends its job on either. node-point takes it as the
  // stop request (the master finishes its step and closes).
  request.interrupt_on_stop = true;
  request.interrupt_signal = SIGTERM;
  request.tick = tick;
  const ChildResult launcher = spawn(request);

  LaunchedRepetition result;
  const std::string output = readFile(request.output_file);
  // The launcher's output first (every node's), then the files the nodes of this host wrote.
  std::string lines = output;
  for (int node = 0; node < point.nodes; ++node)
    lines += readFile(args.outcome + ".node-" + std::to_string(node));
  result.nodes = parseNodeLines(lines);
  endLeftovers(result.nodes, args.outcome);
  result.hosts = hostsOf(result.nodes, point.nodes);
  result.stopped = launcher.killed;
  const std::string ended = "the launcher (" + launch.program() + ") " + launcher.describe();
  const bool report = std::filesystem::exists(args.outcome);
  if (report) {
    try {
      result.outcome = decodeOutcome(readFile(args.outcome));
    } catch (const RunFailed& error) {
      result.broken = "node 0's report is unreadable (" + std::string(error.what()) + "); " + ended;
      return result;
    }
  }
  const bool launcher_ok = launcher.exited && launcher.exit_code == 0;
  // Node 0's failure says what went wrong best; a launcher that failed after a good report
  // still fails the point (a node ended badly: its numbers are not to be trusted).
  if (report && (launcher_ok || result.outcome.status != PointStatus::ok ||
                 (!result.outcome.points.empty() &&
                  result.outcome.points.front().status != PointStatus::ok))) {
    return result;
  }
  if (report) {
    result.broken = "node 0 reported, but " + ended + ": " + outputTail(output);
  } else if (result.nodes.empty() && launcher.exited) {
    result.broken = ended + " and started no synk-bench node process: " + outputTail(output);
  } else if (launcher_ok) {
    result.broken = ended + " but node 0 wrote no report to " + args.outcome +
                    " (node 0 must see the database's folder: run synk-bench on node 0's host "
                    "or keep the database on a file system the nodes share)";
  } else {
    result.broken = ended + ": " + outputTail(output);
  }
  return result;
}

}  // namespace synk::harness
