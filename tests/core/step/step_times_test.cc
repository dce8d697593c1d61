// Session::lastStepTimes (ForkOptions::step_times): every rank's time in the last step by phase.
// A straggler (testkit's slow_on_rank: one rank works 80 ms) shows as that rank's plugin time and
// as every other rank's wait at the agreement; the phases fit in the step; a GPU rank reports the
// span of its plugin's device work.
#include <catch2/catch.hpp>

#include "synk/synk.h"
#include "tests/support/session_fixture.h"

using namespace synk;

namespace {

constexpr int64_t kMs = 1'000'000;

}  // namespace

TEST_CASE("step times name the straggler: its plugin time, the others' wait", "[core]") {
  Session session = test::forkForTest(2, {.step_times = true});
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function f = session.function(model, "slow_on_rank", {.broadcast = {"who", "ms"}});
  Data x = session.data(Array(DType::Float32, {4, 2}));
  Data ms = session.data(Array::scalar<int32_t>(80));
  for (int slow = 0; slow < 2; ++slow) {
    INFO("rank " << slow << " is slow");
    Data who = session.data(Array::scalar<int32_t>(slow));
    f({x, who, ms});
    const std::vector<RankStepTimes> times = session.lastStepTimes();
    REQUIRE(times.size() == 2);
    const RankStepTimes &straggler = times[slow], &other = times[1 - slow];
    CHECK(straggler.rank == slow);
    CHECK(straggler.plugin_ns >= 80 * kMs);
    CHECK(other.plugin_ns < 40 * kMs);
    // The other rank reached the agreement at once and waited there for the straggler.
    CHECK(other.agree_ns >= 40 * kMs);
    CHECK(straggler.agree_ns < other.agree_ns);
    CHECK(straggler.step_ns >= 80 * kMs);
    for (const RankStepTimes& t : times) {
      INFO("rank " << t.rank);
      // Every rank's step lasts until the straggler is done, less the moment a rank asleep
      // between steps takes to wake for the command (79.9 ms seen on a busy machine).
      CHECK(t.step_ns >= 40 * kMs);
      CHECK(t.plugin_ns + t.agree_ns + t.finish_ns + t.inputs_ns <= t.step_ns);
      if (test::testBackend() == "cpu") {
        CHECK(t.device_ns == -1);  // the plugin's time is the host's
      } else {
        CHECK(t.device_ns >= 0);
        CHECK(t.device_ns < 80 * kMs);  // the straggler slept on the host, not on its GPU
      }
    }
  }
}

TEST_CASE("step times are refused without the fork option", "[core]") {
  Session session = test::forkForTest(1);
  CHECK_THROWS_AS(session.lastStepTimes(), UsageError);
}
