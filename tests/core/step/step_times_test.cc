// Session::lastStepTimes (ForkOptions::step_times): every rank's time in the last step by phase.
// A straggler (testkit's slow_on_rank: one rank works 80 ms) shows as that rank's plugin time and
// as every other rank's wait at the agreement; the phases fit in the step; a GPU rank reports the
// span of its plugin's device work (which a host-side sleep inside the plugin is part of).
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

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
        // The span starts when the GPU reaches the call, at once on an idle GPU: the
        // straggler's GPU waited through its host sleep for the work behind it.
        CHECK(t.device_ns >= 0);
        CHECK(t.device_ns <= t.step_ns);
        if (t.rank != slow) CHECK(t.device_ns < 40 * kMs);
      }
    }
  }
}

TEST_CASE("a call that failed leaves no device mark behind for the next step's times", "[core]") {
  Session session = test::forkForTest(2, {.step_times = true});
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function fail = session.function(model, "fail_on_rank", {.broadcast = {"who"}});
  Function slow = session.function(model, "slow_on_rank", {.broadcast = {"who", "ms"}});
  Data x = session.data(Array(DType::Float32, {4, 2}));
  Data first = session.data(Array::scalar<int32_t>(0));
  Data nobody = session.data(Array::scalar<int32_t>(-1));
  Data no_ms = session.data(Array::scalar<int32_t>(0));
  // Rank 0's plugin throws after its work started and before it ended.
  CHECK_THROWS_AS(fail({x, first}), RankError);
  // Not an ordering: a gap that a device span still starting at the failed call would include.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  slow({x, nobody, no_ms});
  for (const RankStepTimes& t : session.lastStepTimes()) {
    INFO("rank " << t.rank);
    if (test::testBackend() == "cpu") {
      CHECK(t.device_ns == -1);
    } else {
      CHECK(t.device_ns >= 0);
      CHECK(t.device_ns < 100 * kMs);  // this call's work only: microseconds
    }
  }
}

TEST_CASE("a synchronize's wait for the device is in every GPU rank's times", "[core]") {
  // The cuda backend is a module with its own copy of synk (core/host_link.h): its waits
  // reach the step's times only through the program's phase clock. Only the cuda variant checks
  // that link (the registry's loader passing linkHost on): on cpu ranks there is no wait.
  Session session = test::forkForTest(2, {.step_times = true});
  Model model = session.load(test::pluginFile("synk_testkit"));
  Function slow = session.function(model, "slow_on_rank", {.broadcast = {"who", "ms"}});
  Data x = session.data(Array(DType::Float32, {4, 2}));
  slow({x, session.data(Array::scalar<int32_t>(-1)), session.data(Array::scalar<int32_t>(0))});
  session.synchronize();
  for (const RankStepTimes& t : session.lastStepTimes()) {
    INFO("rank " << t.rank);
    if (test::testBackend() == "cpu") {
      CHECK(t.device_wait_ns == 0);  // the host device has nothing to wait for
    } else {
      CHECK(t.device_wait_ns > 0);
      CHECK(t.device_wait_ns <= t.step_ns);
    }
  }
}

TEST_CASE("step times are refused without the fork option", "[core]") {
  Session session = test::forkForTest(1);
  CHECK_THROWS_AS(session.lastStepTimes(), UsageError);
}
