#include "synk/harness/cli/ab_loop.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "synk/harness/base/child.h"
#include "synk/harness/base/errors.h"
#include "synk/harness/plan/context.h"
#include "synk/harness/store/store.h"
#include "synk/harness/sweep/micro_store.h"

namespace synk::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A directory of our own under TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "synk-ab-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw RunFailed("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

// Restores the default Ctrl-C handling however the loop ends.
struct StopHandlers {
  explicit StopHandlers(StopWord& stop) { installStopHandlers(&stop); }
  ~StopHandlers() { installStopHandlers(nullptr); }
};

std::string tail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);)
    all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n  " + all[i];
  return out;
}

// One build's points, accumulated over the rounds by comparability key.
struct Accumulated {
  PointRecord point;
  std::vector<RepetitionRecord> repetitions;
  std::vector<SampleRecord> samples;
};

struct Side {
  const char* name;  // "baseline" / "candidate"
  std::string build;
  std::string executable;
  RunRecord first;                // the first round's run: the context
  std::vector<std::string> keys;  // in first-seen order
  std::map<std::string, Accumulated> points;
  std::string problems;  // rounds that did not complete
  std::vector<MicroResults> micro;
  std::vector<std::string> micro_names;
};

// Adds the single repetition of every point of one round's run, numbered after the earlier ones.
void absorbRound(Side& side, const std::string& db, int round) {
  const Store store = Store::open(db, Store::Mode::Read);
  const std::vector<RunRecord> runs = store.runs();
  if (runs.empty()) throw RunFailed(std::string(side.name) + " round stored no run in " + db);
  const RunRecord& run = runs.front();
  if (side.keys.empty()) side.first = *store.run(run.id);
  if (run.status != "complete") {
    side.problems += (side.problems.empty() ? "" : "; ") + std::string("round ") +
                     std::to_string(round + 1) + " " + run.status +
                     (run.message.empty() ? "" : " (" + run.message + ")");
  }
  for (const PointRecord& p : store.points(run.id)) {
    auto [at, added] = side.points.try_emplace(p.key);
    Accumulated& a = at->second;
    if (added) {
      side.keys.push_back(p.key);
      a.point = p;
    } else if (p.status != PointStatus::ok && a.point.status != PointStatus::failed) {
      a.point.status = p.status;  // a failure or a wrong result in any round marks the point
      a.point.reason = p.reason;
    }
    a.point.wrong += added ? 0 : p.wrong;
    a.point.ended_at = p.ended_at;
    std::map<int, int> renumber;
    for (RepetitionRecord r : store.repetitions(p.id)) {
      renumber[r.repetition] = static_cast<int>(a.repetitions.size());
      r.repetition = renumber[r.repetition];
      a.repetitions.push_back(r);
    }
    for (SampleRecord s : store.samples(p.id)) {
      const auto to = renumber.find(s.repetition);
      s.repetition = to == renumber.end() ? static_cast<int>(a.repetitions.size()) : to->second;
      a.samples.push_back(s);
    }
  }
}

int64_t storeSide(Store& store, Side& side, const AbOptions& options) {
  RunRecord run = side.first;
  run.tag = options.tag + "-" + side.name;
  run.command_line = options.command_line;
  const std::string one = "experiment.repetitions = 1\n";
  const size_t at = run.config_resolved.find(one);
  if (at != std::string::npos) {
    run.config_resolved.replace(
        at, one.size(), "experiment.repetitions = " + std::to_string(options.rounds) + "\n");
  }
  const ProcessIdentity me = selfIdentity();
  run.process_id = me.pid;
  run.boot_id = me.boot_id;
  run.process_start = me.start;
  store.beginRun(run);
  for (const std::string& key : side.keys) {
    Accumulated& a = side.points[key];
    a.point.run_id = run.id;
    store.addPoint(a.point, a.repetitions, a.samples);
  }
  if (side.problems.empty()) {
    store.endRun(run.id, "complete");
  } else {
    store.endRun(run.id, "failed", side.problems);
  }
  return run.id;
}

}  // namespace

std::string buildExecutable(const std::string& build, const std::string& name) {
  std::error_code error;
  const fs::path base =
      fs::is_directory(build, error) ? fs::path(build) / "bin" : fs::path(build).parent_path();
  const fs::path exe = fs::absolute(base / name, error);
  if (access(exe.c_str(), X_OK) != 0) {
    throw BadInput("build '" + build + "' has no " + name + " (looked for " + exe.string() + ")");
  }
  return exe.string();
}

AbRuns runAlternately(const AbOptions& options, std::FILE* progress) {
  if (options.rounds < 1) throw BadInput("--repetitions must be at least 1");
  if (!options.micro && access(options.experiment.c_str(), R_OK) != 0) {
    throw BadInput("cannot read experiment file '" + options.experiment + "'");
  }
  const char* program = options.micro ? "synk-micro" : "synk-bench";
  Side sides[2] = {{"baseline", options.baseline_build, "", {}, {}, {}, {}, {}, {}},
                   {"candidate", options.candidate_build, "", {}, {}, {}, {}, {}, {}}};
  for (Side& side : sides)
    side.executable = buildExecutable(side.build, program);
  // Relative paths stay right for the child whatever its directory.
  const std::string experiment = options.micro ? "" : fs::absolute(options.experiment).string();
  TempDir temp;
  StopWord stop;
  StopHandlers handlers(stop);
  for (int round = 0; round < options.rounds; ++round) {
    for (int turn = 0; turn < 2; ++turn) {
      Side& side = sides[(round % 2 == 0) ? turn : 1 - turn];
      const std::string stem = std::string(side.name) + "-" + std::to_string(round);
      const std::string log = temp.file(stem + ".log");
      std::vector<std::string> argv = {side.executable};
      if (options.micro) {
        argv.insert(argv.end(),
                    {"--benchmark_repetitions=1", "--benchmark_out=" + temp.file(stem + ".json"),
                     "--benchmark_out_format=json"});
        argv.insert(argv.end(), options.micro_args.begin(), options.micro_args.end());
      } else {
        argv.insert(argv.end(), {"run", experiment, "--db", temp.file(stem + ".db"), "--set",
                                 "experiment.repetitions=1"});
        for (const std::string& set : options.sets)
          argv.insert(argv.end(), {"--set", set});
      }
      std::fprintf(progress, "ab round %d/%d: %s (%s) ... ", round + 1, options.rounds, side.name,
                   side.build.c_str());
      std::fflush(progress);
      const auto start = Clock::now();
      // Its own process group (Ctrl-C reaches synk-bench, which passes a first one on as
      // SIGINT and kills the group on a second), output in `log`, within the deadline.
      SpawnRequest request;
      request.argv = argv;
      request.output_file = log;
      request.deadline = options.process_timeout;
      request.stop = &stop;
      request.interrupt_on_stop = true;
      const ChildResult done = spawn(request);
      const double took = std::chrono::duration<double>(Clock::now() - start).count();
      std::fprintf(progress, "%s (%.1f s)\n", done.describe().c_str(), took);
      std::fflush(progress);
      if (stop.requested()) throw RunFailed("interrupted (Ctrl-C): nothing stored");
      if (done.exit_code == kExitBadInput) {
        throw BadInput(std::string(side.name) + " build refused the round:" + tail(log, 8));
      }
      const bool micro_ok = options.micro && done.exit_code == 0;
      const bool run_ok =
          !options.micro && (done.exit_code == 0 || done.exit_code == kExitRunFailed);
      if (!micro_ok && !run_ok) {
        throw RunFailed(std::string(side.name) + " round " + std::to_string(round + 1) + " " +
                        done.describe() + ":" + tail(log, 8));
      }
      if (options.micro) {
        side.micro.push_back(readMicroResultsFile(temp.file(stem + ".json")));
        side.micro_names.push_back(side.build + " round " + std::to_string(round + 1));
      } else {
        absorbRound(side, temp.file(stem + ".db"), round);
      }
    }
  }
  Store store = Store::open(options.db, Store::Mode::Write);
  AbRuns runs;
  int64_t* ids[2] = {&runs.baseline, &runs.candidate};
  for (int s = 0; s < 2; ++s) {
    if (options.micro) {
      *ids[s] = importMicroRun(store, sides[s].micro, sides[s].micro_names,
                               {options.tag + "-" + sides[s].name, options.command_line, ""});
    } else {
      *ids[s] = storeSide(store, sides[s], options);
    }
  }
  return runs;
}

}  // namespace synk::harness
