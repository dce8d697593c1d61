// synk-bench as a process: Ctrl-C mid-run, SIGKILL mid-point, two runs writing one database at
// once, and a database from a newer synk-bench. Each test starts the real binary.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "synk/core/shm_segment.h"
#include "synk/harness/store/store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using synk::harness::test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kBench = SYNK_BENCH_EXE;
const std::string kExperiments = std::string(SYNK_SOURCE_DIR) + "/tests/harness/experiments/";

// Starts synk-bench with stdout and stderr into `log`; with own_group, in a process group of its
// own (as a shell starts a foreground job), so that the group can be signalled as a terminal does.
pid_t start(const std::vector<std::string>& args, const std::string& log, bool own_group = false) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(kBench.c_str())};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(kBench.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// The exit code, or 128 + signal; -1 if it did not end before the deadline (then it is killed).
int finish(pid_t pid, std::chrono::seconds deadline) {
  const auto end = Clock::now() + deadline;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Points stored so far (0 while the database does not exist yet).
size_t storedPoints(const std::string& db) {
  try {
    const Store store = Store::open(db, Store::Mode::Read);
    size_t n = 0;
    for (const RunRecord& r : store.runs())
      n += store.points(r.id).size();
    return n;
  } catch (const std::exception&) {
    return 0;
  }
}

// `log`: synk-bench's output, shown if the points never come (what it was doing).
void waitForPoints(const std::string& db, size_t n, const std::string& log) {
  const auto end = Clock::now() + std::chrono::seconds(60);
  while (storedPoints(db) < n) {
    INFO("synk-bench's output so far:\n" << slurp(log));
    REQUIRE(Clock::now() < end);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Every descendant of `root` (by /proc's parent links).
std::set<pid_t> descendants(pid_t root) {
  std::map<pid_t, pid_t> parent;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    parent[pid] = ppid;
  }
  closedir(proc);
  std::set<pid_t> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent) {
      if ((ppid == root || out.count(ppid)) && out.insert(pid).second) grew = true;
    }
  }
  return out;
}

bool gone(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  return stat.empty() || close == std::string::npos || stat[close + 2] == 'Z';
}

// Every stored point is whole: its repetitions' samples all there.
void requireWholePoints(const std::string& db, int64_t run_id, size_t samples_per_point) {
  const Store store = Store::open(db, Store::Mode::Read);
  for (const PointRecord& p : store.points(run_id)) {
    INFO("point " << p.seq << " " << toString(p.status) << " " << p.reason);
    CHECK(p.status == PointStatus::ok);
    CHECK(store.samples(p.id).size() == samples_per_point);
  }
}

// A run of 100 ms steps (experiments/slow.ini) that has stored its first point.
pid_t startSlowRun(const std::string& db, const std::string& log) {
  const pid_t bench = start({"run", kExperiments + "slow.ini", "--db", db}, log);
  waitForPoints(db, 1, log);
  return bench;
}

}  // namespace

TEST_CASE("Ctrl-C stops within a step, keeps finished points, marks the run interrupted",
          "[harness][fault]") {
  TempDir dir;
  const std::string db = dir.file("r.db"), log = dir.file("log");
  const pid_t bench = startSlowRun(db, log);
  const auto signalled = Clock::now();
  kill(bench, SIGINT);
  const int code = finish(bench, std::chrono::seconds(30));
  const double took = std::chrono::duration<double>(Clock::now() - signalled).count();
  INFO(slurp(log));
  CHECK(code == 3);
  CHECK(took < 3.0);  // one 100 ms step, the session's shutdown and the final writes
  const Store store = Store::open(db, Store::Mode::Read);
  const auto runs = store.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == "interrupted");
  const size_t kept = store.points(runs[0].id).size();
  CHECK(kept >= 1);
  CHECK(kept < 6);
  requireWholePoints(db, runs[0].id, 2 * 5);
  CHECK_THAT(slurp(log), Catch::Contains("(interrupted)"));
  // Every point not stored counts as not run: the one cut short and those never started.
  const std::string not_run = std::to_string(6 - kept) + " not run";
  CHECK_THAT(runs[0].message, Catch::Contains(not_run + " (of 6 points)"));
  CHECK_THAT(slurp(log), Catch::Contains(", " + not_run));
}

// A process's start time (clock ticks after boot), 0 once it is gone: with a pid, it names one
// process even after the pid is reused (32768 pids wrap around quickly under parallel tests).
long long startTime(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  long long start = 0;
  rest >> start;
  return start;
}

// Every synk shared-memory segment named after one of `masters` (pid -> start time; a session's
// segments carry its master's pid: core/shm_segment.h), except those of a process that now has
// the pid of a master gone meanwhile.
std::vector<std::string> segmentsOf(const std::map<pid_t, long long>& masters) {
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    for (const auto& [pid, start] : masters) {
      const long long now = startTime(pid);
      if (now != 0 && now != start) continue;  // the pid was reused by another process
      if (name.rfind(synk::processShmPrefix(pid), 0) == 0) left.push_back(name);
    }
  }
  return left;
}

TEST_CASE("group-wide SIGINTs at random moments of a 2-rank point leave no shared memory",
          "[harness][fault]") {
  // Ctrl-C in a terminal signals every process of the foreground group, and `timeout -s INT`
  // signals the command and then its group: synk-bench may see two SIGINTs, the second a hard
  // stop that kills the repetition's process group, its shared-memory watcher included.
  TempDir dir;
  std::mt19937 random(20261125);  // fixed: the same moments on every run
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    const std::string db = dir.file("r" + std::to_string(round) + ".db"), log = dir.file("log");
    const pid_t bench =
        start({"run", kExperiments + "slow.ini", "--db", db, "--set", "axes.ranks=2", "--set",
               "axes.batch=8", "--set", "input.us.range=20000:20000", "--set",
               "experiment.steps=40", "--set", "experiment.repetitions=2"},
              log, /*own_group=*/true);
    // Every process synk-bench starts, seen while it runs (the sessions' masters among them).
    std::map<pid_t, long long> seen;  // pid -> start time
    std::mutex seen_mutex;
    std::atomic<bool> done{false};
    std::thread watch([&] {
      while (!done) {
        const std::set<pid_t> now = descendants(bench);
        {
          std::lock_guard<std::mutex> lock(seen_mutex);
          for (pid_t pid : now)
            if (!seen.count(pid)) seen[pid] = startTime(pid);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    // Wait for the 2-rank repetition (its master, worker and watcher), then a random moment
    // of it, then the signals: the group, and after a random gap (0: the two may merge) again.
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (descendants(bench).size() < 3 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 400));
    kill(-bench, SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 20));
    kill(-bench, SIGINT);
    const int code = finish(bench, std::chrono::seconds(30));
    done = true;
    watch.join();
    INFO("exit code " << code << "; output:\n" << slurp(log));
    CHECK(code == 3);  // interrupted
    // The contract: nothing under /dev/shm within a second of exit (synk-bench removes a killed
    // session's segments itself before it exits, so they are gone at once).
    std::vector<std::string> left = segmentsOf(seen);
    const auto exited = Clock::now();
    while (!left.empty() && Clock::now() - exited < std::chrono::seconds(1)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      left = segmentsOf(seen);
    }
    INFO("left: " << (left.empty() ? "" : left.front()) << " and " << left.size() << " in all");
    CHECK(left.empty());
    for (const std::string& name : left)  // do not leave them to the next test either
      std::filesystem::remove("/dev/shm/" + name);
  }
}

TEST_CASE("a run killed mid-point leaves whole points only and lists as failed",
          "[harness][fault]") {
  TempDir dir;
  const std::string db = dir.file("k.db"), log = dir.file("log");
  const pid_t bench = startSlowRun(db, log);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the next point
  const std::set<pid_t> children = descendants(bench);
  REQUIRE_FALSE(children.empty());  // the repetition's process (and its ranks)
  kill(bench, SIGKILL);
  CHECK(finish(bench, std::chrono::seconds(10)) == 128 + SIGKILL);
  // The repetition's process sees its parent die (SIGTERM), stops after its step and closes the
  // session; its ranks go with it.
  const auto end = Clock::now() + std::chrono::seconds(15);
  for (pid_t pid : children) {
    while (!gone(pid) && Clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(gone(pid));
  }
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    for (pid_t pid : children)
      CHECK(entry.path().filename().string().find("-" + std::to_string(pid) + "-") ==
            std::string::npos);
  }
  const Store store = Store::open(db, Store::Mode::Read);
  const auto runs = store.runs();
  REQUIRE(runs.size() == 1);
  requireWholePoints(db, runs[0].id, 2 * 5);
  const std::string list = dir.file("list");
  CHECK(finish(start({"list", "--db", db}, list), std::chrono::seconds(30)) == 0);
  INFO(slurp(list));
  CHECK_THAT(slurp(list), Catch::Matches("(.|\n)* 1 +\\S+ +failed +slow (.|\n)*"));
}

TEST_CASE("two synk-bench runs writing one database at once both keep every row",
          "[harness][fault]") {
  TempDir dir;
  const std::string db = dir.file("shared.db");
  const std::vector<std::string> args = {"run",   kExperiments + "toy_scaling.ini", "--db", db,
                                         "--set", "experiment.repetitions=2"};
  const pid_t a = start(args, dir.file("a.log"));
  const pid_t b = start(args, dir.file("b.log"));
  const int code_a = finish(a, std::chrono::seconds(120)),
            code_b = finish(b, std::chrono::seconds(120));
  INFO(slurp(dir.file("a.log")) << slurp(dir.file("b.log")));
  CHECK(code_a == 0);
  CHECK(code_b == 0);
  const Store store = Store::open(db, Store::Mode::Read);
  const auto runs = store.runs();
  REQUIRE(runs.size() == 2);
  for (const RunRecord& r : runs) {
    CHECK(r.status == "complete");
    CHECK(store.points(r.id).size() == 4);
    requireWholePoints(db, r.id, 2 * 10);
  }
}

TEST_CASE("a database from a newer synk-bench is refused with exit code 2, untouched",
          "[harness]") {
  TempDir dir;
  const std::string db = dir.file("new.db");
  { Store::open(db, Store::Mode::Write); }
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
  REQUIRE(sqlite3_exec(handle, "PRAGMA user_version = 7; PRAGMA journal_mode = DELETE;", nullptr,
                       nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(handle);
  const std::string before = slurp(db);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", kExperiments + "toy_scaling.ini", "--db", db},
        std::vector<std::string>{"list", "--db", db}}) {
    const std::string log = dir.file("log");
    CHECK(finish(start(args, log), std::chrono::seconds(60)) == 2);
    CHECK_THAT(slurp(log), Catch::Contains("written by a newer synk-bench (schema version 7"));
  }
  CHECK(slurp(db) == before);
}
