#include "synk/harness/sweep/micro_store.h"

#include <cmath>
#include <set>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/hash.h"
#include "synk/harness/plan/context.h"

namespace synk::harness {
namespace {

// Context entries that describe the moment or the host rather than what was measured.
bool describesTheMoment(const std::string& name) {
  static const std::set<std::string> moment = {"date",      "host_name",           "mhz_per_cpu",
                                               "load_avg",  "cpu_scaling_enabled", "synk.commit",
                                               "synk.dirty"};
  return moment.count(name) > 0;
}

std::string baseName(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::string contextValue(const MicroResults& r, const std::string& name) {
  const auto found = r.context.find(name);
  return found == r.context.end() ? "" : found->second;
}

// The lines of `a` that `b` lacks, for a message.
std::string differingLines(const std::string& a, const std::string& b) {
  std::set<std::string> theirs;
  for (size_t at = 0, end; at < b.size(); at = end + 1) {
    end = b.find('\n', at);
    theirs.insert(b.substr(at, end - at));
  }
  std::string out;
  for (size_t at = 0, end; at < a.size(); at = end + 1) {
    end = a.find('\n', at);
    const std::string line = a.substr(at, end - at);
    if (!theirs.count(line)) out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

struct Gathered {
  std::string error;
  std::vector<RepetitionRecord> repetitions;
  std::vector<SampleRecord> samples;
};

}  // namespace

std::string microIdentity(const MicroResults& results) {
  std::string out;
  for (const auto& [name, value] : results.context) {
    if (describesTheMoment(name)) continue;
    out += "context." + name + " = " + (name == "executable" ? baseName(value) : value) + "\n";
  }
  return out;
}

int64_t importMicroRun(Store& store, const std::vector<MicroResults>& files,
                       const std::vector<std::string>& paths, const MicroImportOptions& options) {
  if (files.empty()) throw BadInput("no Google Benchmark JSON file to import");
  const MachineContext machine = probeMachine();
  const std::string identity = microIdentity(files[0]);
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string host = contextValue(files[f], "host_name");
    if (!host.empty() && host != machine.host) {
      throw BadInput(paths[f] + " was measured on host '" + host + "', this is '" + machine.host +
                     "': import it where it ran (the run records this machine's context)");
    }
    if (f > 0 && microIdentity(files[f]) != identity) {
      throw BadInput(paths[f] + " measured something else than " + paths[0] + ": " +
                     differingLines(microIdentity(files[f]), identity));
    }
  }
  RunRecord run = contextRecord(machine);
  const std::string executable = baseName(contextValue(files[0], "executable"));
  run.experiment = executable.empty() ? "micro" : executable;
  run.kind = "micro";
  run.tag = options.tag;
  for (const std::string& path : paths)
    run.config_file += (run.config_file.empty() ? "" : " ") + path;
  run.config_resolved = identity;
  run.command_line = options.command_line;
  const std::string commit = contextValue(files[0], "synk.commit");
  run.commit = !commit.empty() ? commit : !options.commit.empty() ? options.commit : "unknown";
  run.dirty = contextValue(files[0], "synk.dirty") == "true";

  // Every benchmark in first-seen order; its repetitions numbered across the files.
  std::vector<std::string> order;
  std::map<std::string, Gathered> benchmarks;
  for (const MicroResults& file : files) {
    for (const MicroBenchmark& bench : file.benchmarks) {
      auto [at, added] = benchmarks.try_emplace(bench.name);
      if (added) order.push_back(bench.name);
      Gathered& g = at->second;
      if (!bench.error.empty() && g.error.empty()) g.error = bench.error;
      for (const MicroRepetition& rep : bench.repetitions) {
        const int number = static_cast<int>(g.repetitions.size());
        RepetitionRecord r;
        r.repetition = number;
        r.steps = rep.iterations;
        r.value = rep.real_seconds;
        g.repetitions.push_back(r);
        g.samples.push_back(
            {number, 0, 0, static_cast<int64_t>(std::llround(rep.real_seconds * 1e9))});
      }
    }
  }
  store.beginRun(run);
  int seq = 0;
  for (const std::string& name : order) {
    Gathered& g = benchmarks[name];
    PointRecord point;
    point.run_id = run.id;
    point.seq = seq++;
    point.axes = {{"benchmark", name}};
    point.key =
        hashHex("micro\n" + identity + "benchmark=" + name + "\nmachine=" + run.machine_key + "\n");
    point.status = g.error.empty() ? PointStatus::ok : PointStatus::failed;
    point.reason = g.error;
    point.started_at = point.ended_at = run.started_at;
    store.addPoint(point, g.repetitions, g.samples);
  }
  store.endRun(run.id, "complete");
  return run.id;
}

}  // namespace synk::harness
