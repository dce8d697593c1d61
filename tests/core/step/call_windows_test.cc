// The ranks' agreement on window update buffers (core/step/call_windows.cc) on cpu ranks: the
// shared-memory communicator keeps windows as the NCCL one does when SYNK_SHM_WINDOWS=1 (without
// symmetric kernels: what is checked is the agreement, the rotation and the routing).
#include <stdlib.h>
#include <catch2/catch.hpp>

#include "synk/collectives/shm/shm_communicator.h"
#include "tests/support/session_fixture.h"

namespace synk::test {
namespace {

constexpr int64_t kBig = (int64_t{1} << 18) + 64;  // the testkit's "big"

// Windows on for the sessions a test forks (the ranks inherit it), off again after.
struct ShmWindows {
  ShmWindows() { setenv("SYNK_SHM_WINDOWS", "1", 1); }
  ~ShmWindows() { unsetenv("SYNK_SHM_WINDOWS"); }
};

// What the master's communicator did since `before`.
ShmCommunicator::WindowCounts since(const ShmCommunicator::WindowCounts& before) {
  const ShmCommunicator::WindowCounts now = ShmCommunicator::windowCounts();
  return {now.windows - before.windows, now.all_reduces - before.all_reduces};
}

// sum_in_update from zeros: x <- n x + n (n + 1) / 2, exact in fp32 for these few steps.
float expected(int n, int calls) {
  float x = 0;
  for (int k = 0; k < calls; ++k)
    x = static_cast<float>(n) * x + static_cast<float>(n * (n + 1) / 2);
  return x;
}

// Every rank's window all-reduces in the last step (ForkOptions::step_times).
std::vector<int64_t> windowAllReduces(Session& session) {
  std::vector<int64_t> counts;
  for (const RankStepTimes& t : session.lastStepTimes())
    counts.push_back(t.window_all_reduces);
  return counts;
}

void requireEverywhere(Session& session, const Variable& big, float value) {
  for (int r = 0; r < session.size(); ++r) {
    INFO("rank " << r);
    const std::vector<float> got = session.getValue(r, {big}).at(0).toVector<float>();
    REQUIRE(got.size() == static_cast<size_t>(kBig));
    CHECK(got.front() == value);
    CHECK(got.back() == value);
  }
}

TEST_CASE("an unsliced call's large update is all-reduced in a window, three for the rotation",
          "[core]") {
  const int n = GENERATE(2, 3);
  INFO(n << " ranks");
  ShmWindows on;
  Kit kit(n, {.step_times = true});
  Variable big = kit.model.variable("big");
  Function f = kit.session.function(kit.model, "sum_in_update");
  const auto before = ShmCommunicator::windowCounts();
  for (int call = 1; call <= 5; ++call) {
    f({});
    // Every rank's step times count its all-reduce in the window.
    CHECK(windowAllReduces(kit.session) == std::vector<int64_t>(static_cast<size_t>(n), 1));
    requireEverywhere(kit.session, big, expected(n, call));
  }
  // The update buffer, the accumulator and the storage rotate: the first three calls each take
  // a new window (every rank alike), then they are reused.
  const auto done = since(before);
  CHECK(done.windows == 3);
  CHECK(done.all_reduces == 5);
}

TEST_CASE("a rank whose variable was reallocated alone makes every rank take a new window",
          "[core]") {
  ShmWindows on;
  Kit kit(2);
  Variable big = kit.model.variable("big");
  Function f = kit.session.function(kit.model, "sum_in_update");
  for (int call = 0; call < 4; ++call)
    f({});
  const float x = expected(2, 4);
  // Rank 1's storage grows (a new plain buffer), then shrinks back in it; rank 0 keeps its own.
  const Array larger = Array::of<float>({kBig + 1}, std::vector<float>(kBig + 1, x));
  kit.session.setValue(1, {big}, {larger.view()});
  const Array same = Array::of<float>({kBig}, std::vector<float>(kBig, x));
  kit.session.setValue(1, {big}, {same.view()});
  const auto before = ShmCommunicator::windowCounts();
  float want = x;
  for (int call = 0; call < 4; ++call) {
    f({});
    want = 2 * want + 3;
    requireEverywhere(kit.session, big, want);
  }
  // The plain buffer reaches the update slot on rank 1 only: the ranks see different windows
  // there and all take a new one, where a rank alone would have waited for its peer.
  const auto done = since(before);
  CHECK(done.windows >= 1);
  CHECK(done.all_reduces == 4);
}

// Two updates, one with a window and one without (rank 1's big2 differs in size). The call's
// all-reduces all run on the windows' communicator, so big2's buffer must leave the window the
// rotation had put it in: it would lie in a window on rank 0 alone (InCallCollectives refuses
// such a buffer; NCCL would run symmetric kernels on one rank and ordinary ones on the other).
TEST_CASE("an update that gets no window in a call with windows leaves the one it was in",
          "[core]") {
  ShmWindows on;
  Kit kit(2);
  Variable big = kit.model.variable("big"), big2 = kit.model.variable("big2");
  Function f = kit.session.function(kit.model, "sum_pair_in_update");
  for (int call = 0; call < 4; ++call)  // every buffer of both rotations is a window by now
    f({});
  const float x = expected(2, 4);
  requireEverywhere(kit.session, big, x);
  const Array larger = Array::of<float>({kBig + 1}, std::vector<float>(kBig + 1, x));
  kit.session.setValue(1, {big2}, {larger.view()});
  const auto before = ShmCommunicator::windowCounts();
  f({});
  requireEverywhere(kit.session, big, 2 * x + 3);
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    CHECK(kit.session.getValue(r, {big2}).at(0).toVector<float>().front() == 2 * x + 3);
  }
  CHECK(since(before).all_reduces == 1);  // big's, in its window; big2's head in none
}

// InCallCollectives' guard: a buffer in a window the call did not agree on (here a read whose
// storage the rotation made a window, reduced against the ABI's rule) could meet NCCL's
// symmetric kernels on some ranks only; the session ends at once, naming it.
TEST_CASE("an all-reduce of a buffer in a window its call did not agree on ends the session",
          "[core]") {
  ShmWindows on;
  Kit kit(2);
  Function sum = kit.session.function(kit.model, "sum_in_update");
  for (int call = 0; call < 4; ++call)  // big's storage is a window by now
    sum({});
  Function bad = kit.session.function(kit.model, "reduce_read_in_place");
  CHECK_THROWS_WITH(bad({}), Catch::Contains("lies in a window its call did not agree on"));
  CHECK_THROWS(sum({}));  // ended: nothing runs any more
}

// asLocal swaps the master's storage out (its window is let go of on the master alone): the next
// call takes a window free on every rank when there is one, so windows do not pile up.
TEST_CASE("windows that leave the rotation are handed out again, not piled up", "[core]") {
  ShmWindows on;
  Kit kit(2);
  Variable big = kit.model.variable("big");
  Function f = kit.session.function(kit.model, "sum_in_update");
  const auto before = ShmCommunicator::windowCounts();
  float want = 0;
  for (int cycle = 0; cycle < 8; ++cycle) {
    f.asLocal({});  // the master's copy gets + 1 alone
    f({});          // (master + 1) + (rank 1 + 2)
    // The first call hands every rank the master's copy first (a plain variable's ranks take
    // it at its first use), later ones keep rank 1's own.
    want = cycle == 0 ? 5 : (want + 1 + 1) + (want + 2);
    requireEverywhere(kit.session, big, want);
  }
  const auto done = since(before);
  CHECK(done.all_reduces == 8);
  CHECK(done.windows <= 5);  // 3 for the rotation, and at most a couple that reuse could not
}

// A rank whose plan fails (here rank 1's batch_s is out of range) offers not-ok in the window
// exchange: no rank runs the function, and the call fails with that rank's error everywhere.
TEST_CASE("a plan failing on one rank fails the call everywhere before anything runs", "[core]") {
  ShmWindows on;
  Kit kit(2);
  Variable big = kit.model.variable("big");
  // The function's first call: rank 0 has no output buffer yet, and must not offer one.
  Function f = kit.session.function(kit.model, "sum_in_update", {.sliceable = {"big"}});
  CHECK_THROWS_WITH(f({}, {.batch_s = {Selection::all(), Selection::range(0, kBig + 5)}}),
                    Catch::Contains("rank 1"));
  requireEverywhere(kit.session, big, 0);  // nothing ran, nothing changed
  f({});
  requireEverywhere(kit.session, big, 3);
}

TEST_CASE("a sliced call and a communicator without windows take no window", "[core]") {
  const auto before = ShmCommunicator::windowCounts();
  {
    ShmWindows on;
    Kit kit(2);
    Function f = kit.session.function(kit.model, "sum_in_update");
    // Sliced: each slice allocates its own update buffer, and slice counts may differ by rank.
    f({}, {.num_slices = 2});
    requireEverywhere(kit.session, kit.model.variable("big"), 3);
  }
  Kit plain(2, {.step_times = true});  // SYNK_SHM_WINDOWS unset
  Function g = plain.session.function(plain.model, "sum_in_update");
  g({});
  g({});
  CHECK(windowAllReduces(plain.session) == std::vector<int64_t>{0, 0});
  requireEverywhere(plain.session, plain.model.variable("big"), 9);
  CHECK(since(before).windows == 0);
  CHECK(since(before).all_reduces == 0);
}

}  // namespace
}  // namespace synk::test
