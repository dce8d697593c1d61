// A synk program run under mpirun with simulated nodes (SYNK_SIMULATE_NODES=1) to check one
// session over several nodes (cluster/README.md); session_nodes_test.sh starts it and reads what
// it prints. Every launcher calls synk::fork(); only node 0's returns, as the master.
//   session_nodes_check ok RANKS_PER_NODE     the session's size, 300 barrier steps, then what
//       does not cross nodes yet refused by name (load, data), then close: every node's
//       processes end and the job ends cleanly
//   session_nodes_check kill RANKS_PER_NODE   the master steps until a rank of another node is
//       killed (the test script kills it): it must raise PeerFailure naming that rank
//   session_nodes_check bench RANKS_PER_NODE  barrier steps: medians of 5 runs of 2000 (a
//       benchmark, not a test)
// Before fork() each launcher writes its pid to $SYNK_CHECK_PID_DIR/node-<launcher index>.pid
// (the script finds a remote rank there: the node's ranks are its launcher's children).
// The master prints "master: ..." lines; exit 0 when the scenario went as it should.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "synk/core/error.h"
#include "synk/synk.h"

using namespace synk;

namespace {

void writePid() {
  const char* dir = std::getenv("SYNK_CHECK_PID_DIR");
  const char* index = std::getenv("OMPI_COMM_WORLD_RANK");
  if (dir == nullptr || index == nullptr) return;
  std::ofstream(std::string(dir) + "/node-" + index + ".pid") << getpid() << "\n";
}

double barrierMicros(Session& session, int steps) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    session.barrier();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         steps;
}

template <typename F>
void expectRefusal(const char* what, F&& f) {
  try {
    f();
    std::printf("master: FAIL %s was not refused\n", what);
  } catch (const UsageError& e) {
    std::printf("master: refused: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: session_nodes_check ok|kill|bench RANKS_PER_NODE\n");
    return 2;
  }
  const std::string scenario = argv[1];
  writePid();
  ForkOptions options;
  options.backend = "cpu";
  options.ranks_per_node = std::atoi(argv[2]);
  options.timeout = std::chrono::seconds(20);
  try {
    Session session = fork(options);
    std::printf("master: %d ranks, master rank %d\n", session.size(), session.masterRank());
    std::fflush(stdout);
    if (scenario == "ok") {
      barrierMicros(session, 300);
      expectRefusal("data", [&] { session.data(DType::Float32, 1); });
      expectRefusal("load", [&] { session.load("synk_example_intro"); });
      session.barrier();  // still usable after the refusals
      session.close();
      std::printf("master: closed\n");
      return 0;
    }
    if (scenario == "bench") {
      barrierMicros(session, 500);  // warm-up
      std::vector<double> runs;
      for (int run = 0; run < 5; ++run)
        runs.push_back(barrierMicros(session, 2000));
      std::sort(runs.begin(), runs.end());
      std::printf("master: barrier step %.2f us (median of 5 runs of 2000; min %.2f, max %.2f)\n",
                  runs[2], runs.front(), runs.back());
      return 0;
    }
    if (scenario == "kill") {
      std::printf("master: ready\n");
      std::fflush(stdout);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      try {
        while (std::chrono::steady_clock::now() < give_up)
          session.barrier();
      } catch (const PeerFailure& e) {
        std::printf("master: PeerFailure: %s\n", e.what());
        return 0;
      }
      std::printf("master: FAIL no rank died within 60 s\n");
      return 1;
    }
    std::fprintf(stderr, "session_nodes_check: unknown scenario '%s'\n", scenario.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::printf("master: FAIL %s\n", e.what());
    return 1;
  }
}
