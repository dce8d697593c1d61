// synk-bench's one way to run a process (harness/base/child.h, spawn): a body's report or a
// command's output collected, a command's output to a file, and the deadline and a hard stop
// killing the child's whole process group with a message that says so.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "synk/harness/base/child.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using Catch::Contains;

namespace {

// Whether `pid` still runs (a zombie nobody reaped counts as ended).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("spawn: a body's report and exit code, a command's standard output", "[harness]") {
  SpawnRequest body;
  body.body = [](int fd) { return writeAll(fd, "report") ? 3 : 1; };
  const ChildResult reported = spawn(body);
  CHECK(reported.output == "report");
  CHECK(reported.exited);
  CHECK(reported.exit_code == 3);
  CHECK(reported.describe() == "exited with code 3");
  CHECK(captureOutput({"echo", "from a command"}, std::chrono::seconds(60)) == "from a command\n");
  CHECK_FALSE(captureOutput({"false"}, std::chrono::seconds(60)).has_value());
  CHECK_FALSE(captureOutput({"/no/such/program"}, std::chrono::seconds(60)).has_value());
}

TEST_CASE("spawn: a command's output and errors to a file", "[harness]") {
  test::TempDir dir;
  SpawnRequest request;
  request.argv = {"sh", "-c", "echo out; echo err >&2; exit 4"};
  request.output_file = dir.file("log.txt");
  const ChildResult done = spawn(request);
  CHECK(done.exit_code == 4);
  CHECK(done.output.empty());
  std::ifstream log(dir.file("log.txt"));
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(text == "out\nerr\n");
}

TEST_CASE("spawn: at the deadline the child's whole group is killed, and the message says so",
          "[harness]") {
  SpawnRequest request;
  // The child starts a grandchild in its group, reports its pid, and both wait forever.
  request.body = [](int fd) {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      while (true)
        pause();
    }
    writeAll(fd, std::to_string(grandchild));
    while (true)
      pause();
    return 0;
  };
  request.deadline = std::chrono::milliseconds(300);
  const ChildResult done = spawn(request);
  CHECK(done.timed_out);
  CHECK_FALSE(done.exited);
  CHECK(done.describe() == "did not finish within its deadline (0.3 s) and was killed");
  REQUIRE_FALSE(done.output.empty());
  CHECK_FALSE(running(static_cast<pid_t>(std::stol(done.output))));
}

TEST_CASE("spawn: a hard stop (Ctrl-C twice) kills the child", "[harness]") {
  StopWord stop;
  stop.request();
  stop.request();
  SpawnRequest request;
  request.argv = {"cat"};  // would wait for input forever
  request.stop = &stop;
  const ChildResult done = spawn(request);
  CHECK(done.killed);
  CHECK(done.describe() == "was stopped (Ctrl-C twice)");
}
