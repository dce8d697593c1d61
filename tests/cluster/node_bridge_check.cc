// Runs under mpirun (one launcher process per simulated node, SYNK_SIMULATE_NODES=1) to check the
// node bridge (cluster/node_bridge.h); node_bridge_test.sh starts it and reads what it prints.
// Each launcher creates its node's control block for every rank of the session, forks its
// node's ranks (real processes, each with core's Barrier on its global rank), then starts its
// bridge (MPI after the fork) and reaps them.
//   node_bridge_check ok RANKS_PER_NODE     300 barriers over every node: exchanges of every
//       size up to 5000 bytes (past one all-gather block), commands from the master up to 3000
//       bytes, statuses and messages, ok flags; every rank checks every rank's bytes
//   node_bridge_check diverge RANKS_PER_NODE   the last rank arrives at another site: every rank
//       reports the divergence naming it
//   node_bridge_check late RANKS_PER_NODE   the last rank never arrives: node 0's ranks time out
//       at 500 ms naming it; the other nodes' ranks, waiting with 30 s, are ended by the abort
//       node 0 sends
//   node_bridge_check bench 1               barrier round trips over 2 nodes x 1 rank: medians of
//       5 runs of 2000, beside MPI_Barrier between the launchers (a benchmark, not a test)
// A rank prints "rank R: ..." lines; a launcher "node K of N: ok" when its ranks ended as the
// scenario wants. Exit 0 then, 1 with "FAIL: ..." on stderr otherwise.
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "synk/cluster/launch_env.h"
#include "synk/cluster/node_bridge.h"
#include "synk/core/barrier.h"
#include "synk/core/error.h"
#include "synk/core/shm_segment.h"
#include "synk/core/waiter.h"

using namespace synk;
using namespace synk::cluster;

namespace {

// A rank's liveness: its launcher (the node's parent of every rank).
class ParentAlive : public Liveness {
 public:
  explicit ParentAlive(ControlBlock& cb) : cb_(cb), parent_(getppid()) {}
  void check() override {
    if (getppid() == parent_) return;
    abortSession(cb_, AbortReason::PeerDied, -1, "the launcher died");
    throwAborted(cb_);
  }

 private:
  ControlBlock& cb_;
  pid_t parent_;
};

// Byte i of what rank `rank` publishes in round `round`.
std::byte pattern(int rank, int round, size_t i) {
  return static_cast<std::byte>((rank * 131 + round * 7 + static_cast<int>(i)) & 0xff);
}

size_t exchangeSize(int rank, int round) {
  if (round % 50 == 0) return 5000;  // past one all-gather block: the second round
  return static_cast<size_t>((rank * 37 + round) % 200 + 1);
}

size_t commandSize(int round) {
  return round % 50 == 1 ? 3000 : static_cast<size_t>(round % 100 + 8);
}

[[noreturn]] void rankFails(int rank, const std::string& what) {
  std::printf("rank %d: FAIL %s\n", rank, what.c_str());
  std::fflush(stdout);
  _exit(1);
}

// 300 rounds: an exchange, a command from the master, statuses with ok flags.
void rankOk(ControlBlock& cb, Barrier& barrier, Waiter& waiter, int rank, int ranks) {
  for (int round = 0; round < 300; ++round) {
    switch (round % 3) {
      case 0: {
        const size_t n = exchangeSize(rank, round);
        std::byte* out = barrier.outbox(n);
        for (size_t i = 0; i < n; ++i)
          out[i] = pattern(rank, round, i);
        if (!barrier.arrive(waiter, BarrierSite::Exchange)) rankFails(rank, "an ok flag lost");
        for (int r = 0; r < ranks; ++r) {
          const std::byte* in = barrier.exchangeOf(r);
          for (size_t i = 0; i < exchangeSize(r, round); ++i) {
            if (in[i] != pattern(r, round, i)) {
              rankFails(rank, str("round ", round, ": rank ", r, "'s exchange byte ", i));
            }
          }
        }
        break;
      }
      case 1: {
        const size_t half = (barrier.epoch() + 1) & 1;
        const size_t n = commandSize(round);
        if (rank == cb.master_rank) {
          cb.opcode[half] = static_cast<uint32_t>(round);
          cb.payload_bytes[half] = static_cast<uint32_t>(n);
          for (size_t i = 0; i < n; ++i)
            cb.payload[half][i] = pattern(-1, round, i);
        }
        barrier.arrive(waiter, BarrierSite::CommandStart);
        if (cb.opcode[half] != static_cast<uint32_t>(round)) {
          rankFails(rank, str("round ", round, ": opcode ", cb.opcode[half]));
        }
        for (size_t i = 0; i < n; ++i) {
          if (cb.payload[half][i] != pattern(-1, round, i)) {
            rankFails(rank, str("round ", round, ": command byte ", i));
          }
        }
        break;
      }
      default: {
        const int refuser = round % ranks;
        RankSlot& mine = cb.slot(rank);
        mine.status = rank + 1;
        storeMessage(mine.message, str("rank ", rank, " in round ", round));
        mine.shape_generation = static_cast<uint64_t>(round * 1000 + rank);
        if (barrier.arrive(waiter, BarrierSite::CommandEnd, rank != refuser)) {
          rankFails(rank, str("round ", round, ": rank ", refuser, "'s false ok flag lost"));
        }
        for (int r = 0; r < ranks; ++r) {
          const RankSlot& slot = cb.slot(r);
          if (barrier.okOf(r) != (r != refuser) || slot.status != r + 1 ||
              slot.shape_generation != static_cast<uint64_t>(round * 1000 + r) ||
              std::string(slot.message) != str("rank ", r, " in round ", round)) {
            rankFails(rank, str("round ", round, ": rank ", r, "'s ok, status or message: ",
                                barrier.okOf(r), " ", slot.status, " '", slot.message, "'"));
          }
        }
      }
    }
  }
  std::printf("rank %d: ok\n", rank);
}

void rankBench(Barrier& barrier, Waiter& waiter, int rank) {
  std::vector<double> runs;
  constexpr int kRuns = 5, kBarriers = 2000;
  for (int i = 0; i < 200; ++i)
    barrier.arrive(waiter, BarrierSite::Exchange);  // warm-up
  for (int run = 0; run < kRuns; ++run) {
    const auto start = Clock::now();
    for (int i = 0; i < kBarriers; ++i)
      barrier.arrive(waiter, BarrierSite::Exchange);
    runs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                   kBarriers);
  }
  std::sort(runs.begin(), runs.end());
  if (rank == 0) {
    std::printf("bench: bridged barrier %.2f us (median of %d runs of %d; min %.2f, max %.2f)\n",
                runs[kRuns / 2], kRuns, kBarriers, runs.front(), runs.back());
  }
}

// A rank: its barrier, its waiter (500 ms on node 0 in the late scenario, else 30 s), then the
// scenario. Exit 0 when it went as the scenario wants.
[[noreturn]] void runRank(ControlBlock& cb, const NodeLayout& layout, int rank,
                          const std::string& scenario) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int ranks = layout.worldRanks();
  cb.slot(rank).pid = getpid();
  Barrier barrier(cb, rank, ranks, std::chrono::microseconds(200), /*yield=*/true);
  ParentAlive parent(cb);
  Waiter waiter(cb, &parent, Clock::now() + std::chrono::milliseconds(30000),
                "the check's barrier");
  const int last = ranks - 1;
  try {
    if (scenario == "ok") {
      rankOk(cb, barrier, waiter, rank, ranks);
    } else if (scenario == "bench") {
      rankBench(barrier, waiter, rank);
    } else if (scenario == "diverge") {
      barrier.arrive(waiter, BarrierSite::Exchange);
      barrier.arrive(waiter, rank == last ? BarrierSite::Agree : BarrierSite::Exchange);
      rankFails(rank, "the divergence went unnoticed");
    } else if (scenario == "late") {
      barrier.arrive(waiter, BarrierSite::Exchange);
      if (rank == last) {
        while (true)
          pause();  // never arrives; its launcher kills it after the abort
      }
      if (layout.node == 0) {
        // Node 0 first sees every node between it and the late one arrive (their packets
        // applied), however slow the host, then waits 500 ms for the rest: its deadline must
        // name the late node's ranks alone.
        const int late_node = layout.nodeOf(last);
        const auto limit = Clock::now() + std::chrono::seconds(30);
        for (int r = layout.ranks_per_node; r < late_node * layout.ranks_per_node; ++r) {
          while (cb.slot(r).arrived.load() < barrier.epoch() + 1) {
            if (Clock::now() > limit) rankFails(rank, str("rank ", r, " never arrived"));
            waiter.check();
            sched_yield();
          }
        }
        waiter.rearm(Clock::now() + std::chrono::milliseconds(500), "the check's barrier");
      }
      barrier.arrive(waiter, BarrierSite::Exchange);
      rankFails(rank, "a barrier without the last rank was passed");
    }
  } catch (const std::exception& e) {
    std::printf("rank %d: %s: %s\n", rank,
                scenario == "ok" || scenario == "bench" ? "FAIL" : "ended", e.what());
    std::fflush(stdout);
    _exit(scenario == "ok" || scenario == "bench" ? 1 : 0);
  }
  std::fflush(stdout);
  _exit(0);
}

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: node_bridge_check ok|diverge|late|bench RANKS_PER_NODE");
  const std::string scenario = argv[1];
  try {
    const EnvLookup env = processEnvironment();
    NodeRequest request;
    request.ranks_per_node = std::stoi(argv[2]);
    request.simulate_nodes = simulateNodesRequested(env);
    const NodeLayout layout = planNodes(detectLauncher(env), request);
    const int ranks = layout.worldRanks();
    SharedMapping mapping(ControlBlock::bytesFor(ranks));
    auto* cb = new (mapping.data()) ControlBlock;
    cb->n_ranks = ranks;
    cb->ranks_per_node = layout.ranks_per_node;
    cb->master_rank = 0;
    for (int r = 0; r < ranks; ++r)
      new (&cb->slot(r)) RankSlot{};
    std::fflush(nullptr);
    std::vector<pid_t> children;
    for (int i = 0; i < layout.ranks_per_node; ++i) {
      const pid_t pid = fork();
      if (pid < 0) return fail("fork");
      if (pid == 0) runRank(*cb, layout, layout.globalRank(i), scenario);
      children.push_back(pid);
    }
    BridgeOptions options;
    options.calibrate = scenario == "bench" ? 2000 : 0;
    NodeBridge bridge(*cb, layout, options);
    // Reap the node's ranks; once the session is aborted, one that never arrives is killed.
    int failed = 0;
    size_t left = children.size();
    bool late_killed = false;
    while (left > 0) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        --left;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
        continue;
      }
      if (cb->abort.load() != 0 && scenario == "late" && layout.node == layout.nodes - 1 &&
          !late_killed) {
        kill(children.back(), SIGKILL);  // the late rank (the last): it is known not to come
        waitpid(children.back(), &status, 0);
        --left;
        late_killed = true;
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    bridge.end();  // the last barrier carried through: the count is final
    if (scenario == "bench" && layout.node == 0) {
      std::printf("bench: MPI_Barrier %.2f us (median of %d)\n",
                  std::chrono::duration<double, std::micro>(bridge.mpiBarrierMedian()).count(),
                  options.calibrate);
    }
    if (failed) return fail(str("node ", layout.node, ": ", failed, " rank(s) failed"));
    std::printf("node %d of %d: ok (%llu barriers bridged)\n", layout.node, layout.nodes,
                static_cast<unsigned long long>(bridge.barriers()));
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
