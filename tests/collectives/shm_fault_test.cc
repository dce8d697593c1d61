// Failure contract of the shared-memory collectives: a rank that dies inside a collective makes
// the master's call throw PeerFailure naming it and how it died, promptly, and the session's
// shared memory is removed at shutdown.
#include <signal.h>

#include <catch2/catch.hpp>
#include <stdexcept>

#include "synk/collectives/cpu/cpu_backend.h"
#include "synk/core/error.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

using Catch::Matchers::Contains;

// A liveness probe that kills its own process: the communicator probes its waiter on entry, so
// the rank dies inside the collective, after its peers have entered it.
class SigkillOnProbe final : public Liveness {
 public:
  void check() override { raise(SIGKILL); }
};

struct MasterView {
  bool threw_peer_failure = false;
  int rank = -1;
  std::string message;
  double seconds = 0;
  std::string other;  // anything else that happened instead
};

TEST_CASE("a rank SIGKILLed inside a collective fails the master's call", "[coll][fault]") {
  const auto factory = makeCpuBackendFactory();
  const int n = GENERATE(2, 3);
  MasterView seen;  // written by the master's body (rank 0 runs in this process)
  const RankRun run = launchRanks(*factory, n, [&](RankContext& ctx) {
    Communicator& comm = ctx.backend.communicator(true);
    const size_t count = size_t{1} << 20;
    void* buffer = ctx.device().allocate(count * sizeof(float));
    const AllReduceArgs args{buffer, count, DType::Float32, ReduceOp::Sum};
    {
      // A healthy round first: the victim's segments are mapped by its peers when it dies.
      Waiter waiter = ctx.waiter("warm-up allReduce");
      comm.allReduce(args, waiter);
    }
    if (ctx.rank() == 1) {
      SigkillOnProbe killer;
      Waiter waiter(ctx.group.control(), &killer, Clock::now() + std::chrono::seconds(20),
                    "the victim's allReduce");
      comm.allReduce(args, waiter);
      throw std::runtime_error("rank 1 survived its SIGKILL");
    }
    Waiter waiter = ctx.waiter("allReduce with a dying peer");
    const auto start = Clock::now();
    try {
      comm.allReduce(args, waiter);
      if (ctx.rank() == 0) seen.other = "allReduce returned normally";
    } catch (const PeerFailure& e) {
      if (ctx.rank() == 0) {
        seen.threw_peer_failure = true;
        seen.rank = e.rank();
        seen.message = e.what();
        seen.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      }
    } catch (const std::exception& e) {
      if (ctx.rank() == 0) seen.other = e.what();
    }
  });
  INFO(run.describe() << "master saw: " << seen.message << seen.other);
  REQUIRE(seen.threw_peer_failure);
  CHECK(seen.rank == 1);
  CHECK_THAT(seen.message, Contains("rank 1") && Contains("SIGKILL"));
  CHECK(seen.seconds < 5.0);
  CHECK_FALSE(run.ranks[1].exited_ok);
  CHECK(run.leftover_segments == 0);
}

}  // namespace
}  // namespace synk::test
