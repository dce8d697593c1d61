// Session lifecycle: fork, close, misuse, cleanup.
#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synk/core/shm_segment.h"
#include "synk/plugins/abi/synk_plugin.h"
#include "synk/synk.h"
#include "tests/support/rank_fixture.h"
#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;

TEST_CASE("a session that was never forked refuses every call", "[core][session]") {
  Session never;
  CHECK_THROWS_WITH(never.size(), Contains("not forked: call synk::fork() first"));
  CHECK_THROWS_AS(never.load("x.so"), UsageError);
  CHECK_THROWS_AS(never.barrier(), UsageError);
  Data data;
  CHECK_THROWS_WITH(data.shape(), Contains("empty"));
  Function f;
  CHECK_THROWS_WITH(f({}), Contains("this function handle is empty (default-constructed)") &&
                               Contains("Session::function"));
  CHECK_THROWS_WITH(Model().variables(), Contains("this model handle is empty"));
  CHECK_THROWS_WITH(Variable().getValue(), Contains("this variable handle is empty"));
}

void checkLifecycle(int ranks) {
  Session session = test::forkForTest(ranks);
  CHECK(session.size() == ranks);
  CHECK_THROWS_WITH(test::forkForTest(2), Contains("already open"));
  Model model = session.load(test::pluginFile("synk_testkit"));
  Data d = session.data(Array(DType::Float32, {64, 2}));
  session.function(model, "noop")({d});
  CHECK(test::segmentsOfThisProcess() > 0);
  const std::vector<int> pids = session.pids();
  REQUIRE(pids.size() == size_t(ranks));
  for (int r = 1; r < ranks; ++r)
    CHECK(test::processAlive(pids[r]));
  session.close();
  CHECK(session.closed());
  for (int r = 1; r < ranks; ++r)
    CHECK_FALSE(test::processAlive(pids[r]));
  CHECK(test::segmentsOfThisProcess() == 0);
  CHECK_THROWS_WITH(session.barrier(), Contains("closed"));
  CHECK_THROWS_WITH(d.value(), Contains("closed"));
  session.close();  // idempotent
  if (test::testBackend() == "cpu") {
    // A new session may start once the old one is closed.
    Session again = test::forkForTest(2);
    again.barrier();
  } else {
    // The master initialised CUDA: this process may not fork ranks again, and says why.
    CHECK_THROWS_WITH(test::forkForTest(2), Contains("CUDA was initialised"));
  }
}

TEST_CASE("close ends every worker and removes every segment (1 rank)", "[core][session]") {
  checkLifecycle(1);
}

TEST_CASE("fork twice is an error, close ends every worker and removes every segment (2 ranks)",
          "[core][session]") {
  checkLifecycle(2);
}

TEST_CASE("close ends every worker and removes every segment (4 ranks)", "[core][session]") {
  checkLifecycle(4);
}

TEST_CASE("fork options are validated before anything starts", "[core][session]") {
  CHECK_THROWS_WITH(test::forkForTest(2, {.master_rank = 2}), Contains("master_rank 2"));
  CHECK_THROWS_WITH(test::forkForTest(-1), Contains("n_parallel"));
  CHECK_THROWS_WITH(test::forkForTest(2, {.devices = {0}}), Contains("1 devices listed for 2"));
  CHECK_THROWS_WITH(test::forkForTest(2, {.timeout = std::chrono::milliseconds(-1)}),
                    Contains("timeout must be positive"));
  CHECK_THROWS_WITH(test::forkForTest(2, {.startup_timeout = std::chrono::milliseconds(0)}),
                    Contains("startup_timeout must be positive"));
  ForkOptions bad;
  bad.backend = "tpu";
  bad.n_parallel = 2;
  CHECK_THROWS_WITH(synk::fork(bad), Contains("unknown backend 'tpu'") && Contains("cpu"));
  std::string from_thread;
  std::thread([&] {
    try {
      test::forkForTest(2);
    } catch (const UsageError& e) {
      from_thread = e.what();
    }
  }).join();
  CHECK_THAT(from_thread, Contains("main thread"));
  CHECK(test::segmentsOfThisProcess() == 0);
}

TEST_CASE("the master may be any rank", "[core][session]") {
  Session session = test::forkForTest(3, {.master_rank = 2});
  CHECK(session.masterRank() == 2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f =
      session.function(model, "rank_info",
                       {.outputs = {{"rank", "none"}, {"max_rank", "max"}, {"min_rank", "min"}}});
  CHECK(f({}).at(0).toVector<int64_t>() == std::vector<int64_t>{2});
}

TEST_CASE("a plugin that does not load fails in the master, before any rank moves",
          "[core][session]") {
  Session session = test::forkForTest(2);
  CHECK_THROWS_AS(session.load("/nonexistent/libmodel.so"), PluginError);
  const std::string abi2 = test::pluginFile("synk_test_raw_abi2");
  CHECK_THROWS_AS(session.load(abi2), PluginError);
  CHECK_THROWS_WITH(session.load(abi2),
                    Contains("libsynk_test_raw_abi2.so was built for synk plugin ABI 2.0") &&
                        Contains(str("this host supports ", SYNK_PLUGIN_ABI_MAJOR, ".x")) &&
                        Contains("synk_plugin_abi_version() returned 2.0"));
  session.barrier();  // still usable
}

TEST_CASE("a plugin file replaced after the master loaded it fails the call, not the session",
          "[core][session]") {
  Session session = test::forkForTest(2);
  const std::filesystem::path dir = str("/tmp/synk-replaced-plugin-", getpid());
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "libmodel.so";
  std::filesystem::copy_file(test::pluginFile("synk_testkit"), file);
  Model model = session.load(file.string());
  Function f =
      session.function(model, "rank_info",
                       {.outputs = {{"rank", "none"}, {"max_rank", "max"}, {"min_rank", "min"}}});
  // The workers load the file at the first call: by then it is another model.
  std::filesystem::copy_file(test::pluginFile("synk_example_intro"), dir / "next.so");
  std::filesystem::rename(dir / "next.so", file);
  CHECK_THROWS_WITH(f({}), Contains("on rank 1") && Contains("was the file replaced?"));
  std::filesystem::remove_all(dir);
  session.barrier();  // the failed distribute left every rank in step
}

TEST_CASE("bind_cpus pins each cpu rank to its own CPU", "[core][session]") {
  if (test::testBackend() != "cpu") test::skipTest("cpu backend only");
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  if (CPU_COUNT(&allowed) < 2) test::skipTest("needs 2 CPUs");
  Session session = test::forkForTest(2, {.bind_cpus = true});
  const std::vector<int> pids = session.pids();
  std::vector<int> bound;
  for (int pid : pids) {
    cpu_set_t set;
    REQUIRE(sched_getaffinity(pid, sizeof set, &set) == 0);
    CHECK(CPU_COUNT(&set) == 1);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) bound.push_back(cpu);
    }
  }
  REQUIRE(bound.size() == 2);
  CHECK(bound[0] != bound[1]);
  session.close();
  REQUIRE(sched_setaffinity(0, sizeof allowed, &allowed) == 0);  // undo for later cases
}

namespace {

// Sets the process umask for a scope: with umask 0, a mode left to the umask would show.
struct UmaskGuard {
  mode_t old;
  explicit UmaskGuard(mode_t mask) : old(umask(mask)) {}
  ~UmaskGuard() { umask(old); }
};

}  // namespace

TEST_CASE("shared-memory segments of a session are mode 0600 and carry the session's prefix",
          "[core][session]") {
  UmaskGuard open_umask(0);
  Session session = test::forkForTest(2);
  Model model = session.load(test::pluginFile("synk_testkit"));
  Data d = session.data(Array(DType::Float32, {64, 2}));
  session.function(model, "noop")({d});
  const std::string prefix = processShmPrefix(getpid());
  std::vector<std::filesystem::path> mine;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) mine.push_back(entry.path());
  }
  // At least the Data's blob and each rank's heap.
  CHECK(mine.size() >= 3);
  CHECK(int(mine.size()) == test::segmentsOfThisProcess());
  std::string token;  // the session's random token follows the process prefix
  for (const std::filesystem::path& path : mine) {
    INFO(path);
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(st.st_uid == geteuid());
    const std::string rest = path.filename().string().substr(prefix.size());
    const std::string this_token = rest.substr(0, rest.find('-'));
    CHECK(!this_token.empty());
    if (token.empty()) token = this_token;
    CHECK(this_token == token);
  }
  session.close();
  for (const std::filesystem::path& path : mine)
    CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("distribute is incremental: models and functions added after a call reach every rank",
          "[core][session]") {
  test::Kit kit(2);
  Variable s = kit.model.variable("s");
  s.setValue(Array::vector<float>({2, 3}));  // before the first distribute: reaches every rank
  Function info = kit.session.function(
      kit.model, "rank_info",
      {.outputs = {{"rank", "none"}, {"max_rank", "max"}, {"min_rank", "min"}}});
  CHECK(info({}).at(1).toVector<int64_t>() == std::vector<int64_t>{1});  // distributes implicitly
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == std::vector<float>{2, 3, 2, 3});
  s.setValue(Array::vector<float>({4, 5}));  // after it: the master's copy only
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == std::vector<float>{4, 5, 2, 3});

  // A function of the distributed model, bound after the call: rank r uses row r of x.
  const std::vector<float> x = {1, 2, 3, 4};
  Data data = kit.session.data(Array::of<float>({2, 2}, x));
  Function update = kit.session.function(kit.model, "shared_update");
  update({data});
  const std::vector<float> s_after = {x[0] * 4, x[1] * 5, x[2] * 2, x[3] * 3};
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == s_after);

  // A second model loaded now: the value the master sets before its distribute reaches every
  // rank, and distributing it leaves the first model's variables alone.
  Model second = kit.session.load(synk::pluginPath("synk_example_shared_variable"));
  Variable s2 = second.variable("s");
  s2.setValue(Array::vector<float>({-1, 0.5f}));
  Function f = kit.session.function(second, "f");
  f({data});  // distributes the model and f implicitly
  CHECK(kit.session.gather({s2}).at(0).toVector<float>() ==
        std::vector<float>{x[0] * -1, x[1] * 0.5f, x[2] * -1, x[3] * 0.5f});
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == s_after);
  kit.session.distribute();  // nothing new: changes nothing
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == s_after);
}

TEST_CASE("a model whose creation fails on one rank is dropped and the session goes on",
          "[core][session]") {
  test::Kit kit(2);
  // The master (rank 0) creates it at load; rank 1 refuses at the distribute.
  Model bad = kit.session.load(test::pluginFile("synk_test_raw_create_fails_rank1"));
  Function add = kit.session.function(bad, "add", {.outputs = {{"sum", "sum"}}});
  Function dot = kit.session.function(kit.model, "mean_dot", {.broadcast = {"y"}});
  Data x = kit.session.data(Array::of<float>({2, 2}, {1, 2, 3, 4}));
  Data y = kit.session.data(Array::vector<float>({1, 1}));
  // The first call distributes, meets the failure, reports it once and drops the model ...
  CHECK_THROWS_WITH(dot({x, y}), Contains("model 'raw'") && Contains("was dropped") &&
                                     Contains("create refused on rank 1"));
  // ... whose handles say so from now on,
  CHECK_THROWS_WITH(bad.variables(), Contains("model 'raw'") && Contains("was dropped"));
  CHECK_THROWS_WITH(add({x}), Contains("function 'add'") && Contains("was dropped"));
  CHECK_THROWS_AS(kit.session.function(bad, "add"), UsageError);
  // while everything else goes on: calls, new functions, collectives, new models.
  CHECK(dot({x, y}).at(0).toVector<float>() == std::vector<float>{5});
  Function update = kit.session.function(kit.model, "shared_update");
  update({x});
  kit.session.allReduce({kit.model.variable("s")}, ReduceOp::Sum);
  CHECK(kit.session.gather({kit.model.variable("s")}).at(0).toVector<float>() ==
        std::vector<float>{4, 6, 4, 6});
  Model intro = kit.session.load(test::pluginFile("synk_example_intro"));
  Function z = kit.session.function(intro, "z", {.broadcast = {"y"}});
  CHECK(z({x, y}).at(0).toVector<float>() == std::vector<float>{5});
  CHECK_NOTHROW(kit.session.distribute());
}

TEST_CASE("load takes a plugin's name: every rank loads the file found", "[core][session]") {
  test::Kit kit(2);
  Model intro = kit.session.load("synk_example_intro");
  CHECK(intro.source() == test::pluginFile("synk_example_intro"));
  Function z = kit.session.function(intro, "z", {.broadcast = {"y"}});
  const Array x = Array::of<float>({2, 2}, {1, 2, 3, 4});
  CHECK(z({x, Array::vector<float>({1, 1})}).at(0).toVector<float>() == std::vector<float>{5});
  CHECK_THROWS_WITH(kit.session.load("synk_no_such_plugin"),
                    Contains("plugin 'synk_no_such_plugin' not found"));
}
