// A child process forked by the master without exec (a checkpoint writer forked copy-on-write)
// holds a copy of every handle and of the at-exit handler. Whatever it does with them — exit(),
// drop them, call the session — the master's session goes on untouched.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "synk/core/error.h"
#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;
using test::Kit;

namespace {

// Forks a child that runs `body` and leaves with its result through exit() (at-exit handlers and
// static destructors run, as in a real program); returns the child's exit code.
template <typename Body>
int inChild(Body&& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 100;
    try {
      code = body();
    } catch (...) {
      code = 101;
    }
    std::exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a child forked by the master that exits or drops its handles leaves the session be",
          "[core][fault]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "mean_dot", {.broadcast = {"y"}});
  Data x = kit.session.data(Array::of<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  Data y = kit.session.data(Array::vector<float>({1, 1}));
  const std::vector<float> before = f({x, y}).at(0).toVector<float>();
  const std::vector<int> pids = kit.session.pids();
  const int segments = test::segmentsOfThisProcess();

  // A child that only exits: the inherited at-exit handler used to send Quit and unlink all.
  CHECK(inChild([] { return 0; }) == 0);
  // A child that uses the session is told it is a copy, and its dropped handles free nothing.
  const int used = inChild([&] {
    try {
      kit.session.barrier();
      return 1;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      if (what.find("copy of the session's master") == std::string::npos) return 2;
    }
    x = Data();
    kit.session.close();
    kit.session = Session();
    return 0;
  });
  CHECK(used == 0);

  CHECK_FALSE(kit.session.closed());
  CHECK(test::segmentsOfThisProcess() == segments);
  for (int pid : pids)
    CHECK(test::processAlive(pid));
  CHECK(f({x, y}).at(0).toVector<float>() == before);
  kit.session.barrier();
}
