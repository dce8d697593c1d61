// Small all_reduces replayed as CUDA graphs (collectives/cuda/nccl/graph_replay.h), against the
// NCCL stand-in, whose stream records what is enqueued while it captures and runs it again at
// every launch, and which flags ranks that mix a launched and an issued call and an abort with
// graphs alive: GraphReplay's rule on one stand-in device (seen once: issued; twice: captured
// and launched; what the ranks agree on wins; graphs dropped when device memory is released,
// when a key falls out, or for good when a capture fails), then NcclCommunicator on forked
// ranks — every replayed all_reduce still sums exactly, a rank whose graphs went makes every
// rank issue, and a fault in a replayed one is reported as in an issued one.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "synk/collectives/cuda/nccl/graph_replay.h"
#include "tests/collectives/nccl_standin_checks.h"
#include "tests/support/nccl_standin/standin_device.h"
#include "tests/support/nccl_standin/standin_nccl.h"

namespace synk::test {
namespace {

using Catch::Matchers::Contains;

using Proposal = GraphReplay::Proposal;
using Agreed = GraphReplay::Agreed;
constexpr auto alone = &GraphReplay::alone;

// One stand-in device and a float buffer on it; `doubled()` enqueues x *= 2.
struct OneDevice {
  standin::StandinDevice device{0, 0, standin::standinNccl()};
  std::vector<float> host = std::vector<float>(64, 1.5f);
  void* buffer = device.allocate(host.size() * sizeof(float));
  std::unique_ptr<ControlBlock> control = std::make_unique<ControlBlock>();
  Waiter waiter{*control, nullptr, Waiter::never(), "a stand-in device"};

  OneDevice() {
    device.copy(buffer, host.data(), host.size() * sizeof(float), CopyKind::HostToDevice);
    device.synchronize(waiter);
  }
  std::function<void()> doubled() {
    return [this] { device.scale(buffer, host.size(), DType::Float32, 2.0); };
  }
  float value() {
    device.copy(host.data(), buffer, host.size() * sizeof(float), CopyKind::DeviceToHost);
    device.synchronize(waiter);
    for (float x : host)
      REQUIRE(x == host[0]);
    return host[0];
  }
};

TEST_CASE("graph replay: issued once, captured the second time, launched from then on", "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {7, 1};
  float want = 1.5f;
  for (int call = 0; call < 4; ++call) {
    graphs.run(key, alone, d.doubled());
    want *= 2;
    CHECK(d.value() == want);  // every launch runs the work again, and only once
  }
  CHECK(graphs.captures() == 1);
  CHECK(graphs.launches() == 3);
  CHECK(graphs.issued() == 1);  // the first call
  CHECK(graphs.memoryClears() == 0);

  SECTION("released device memory drops every graph: issued, then captured again") {
    d.device.release(d.device.allocate(16));
    graphs.run(key, alone, d.doubled());
    CHECK(graphs.launches() == 3);
    graphs.run(key, alone, d.doubled());
    CHECK(graphs.captures() == 2);
    CHECK(graphs.launches() == 4);
    CHECK(graphs.memoryClears() == 1);
    CHECK(
        graphs.summary().starts_with("4 launched, 2 captured, 2 issued, graphs dropped 1 times as "
                                     "memory was freed; agreeing took "));
    CHECK(d.value() == want * 4);
  }
  SECTION("a key pushed out by `capacity` newer ones starts over") {
    GraphReplay small(d.device, true, 2);
    const uint64_t a[] = {1}, b[] = {2}, c[] = {3};
    for (const auto* k : {a, a, b, c, a, a})
      small.run(std::span(k, 1), alone, d.doubled());
    CHECK(small.captures() == 2);  // a at its second call; a again after it fell out
    CHECK(small.launches() == 2);
    CHECK(d.value() == want * 64);
  }
  SECTION("off: always issued") {
    GraphReplay off(d.device, false);
    for (int call = 0; call < 3; ++call)
      off.run(key, alone, d.doubled());
    CHECK(off.captures() == 0);
    CHECK(d.value() == want * 8);
  }
}

TEST_CASE("graph replay: an error while capturing ends the capture and reaches the caller",
          "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  graphs.run(key, alone, d.doubled());
  CHECK_THROWS_WITH(graphs.run(key, alone, [] { throw InvalidArgument("bad call"); }), "bad call");
  // The stream is not left capturing: the next call runs (issued, then captured).
  graphs.run(key, alone, d.doubled());
  CHECK(d.value() == 6.0f);
  CHECK(graphs.enabled());
}

TEST_CASE("graph replay: a capture that cannot become a graph turns replay off, nothing lost",
          "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  auto query_inside = [&] {  // an unsafe call during a capture: CUDA invalidates the capture
    d.doubled()();
    (void)d.device.queryStream();
  };
  graphs.run(key, alone, query_inside);  // first sighting: issued (no capture to spoil)
  graphs.run(key, alone, query_inside);  // captured, invalidated: issued as it is instead
  CHECK_FALSE(graphs.enabled());
  graphs.run(key, alone, d.doubled());
  CHECK(graphs.captures() == 0);
  CHECK(graphs.launches() == 0);
  CHECK(d.value() == 1.5f * 8);  // each call's work ran once
}

TEST_CASE("graph replay: what the ranks agree on wins over what this rank could do", "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  graphs.run(key, alone, d.doubled());  // issued
  graphs.run(key, alone, d.doubled());  // captured and launched
  // Another rank never saw the call (or dropped its graphs): issued, and this graph goes.
  graphs.run(
      key,
      [](Proposal) {
        return Agreed{GraphReplay::kIssue, true};
      },
      d.doubled());
  CHECK(graphs.launches() == 1);
  // Every rank saw it now: captured again, then launched.
  graphs.run(key, alone, d.doubled());
  CHECK(graphs.captures() == 2);
  graphs.run(key, alone, d.doubled());
  CHECK(graphs.launches() == 3);
  CHECK(d.value() == 1.5f * 32);  // five calls, each run once
}

TEST_CASE("graph replay: graphs of different captures on different ranks are captured again",
          "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  graphs.run(key, alone, d.doubled());
  graphs.run(key, alone, d.doubled());  // capture 0, launched
  std::vector<Proposal> proposed;
  // Another rank's graph for this call came from another capture.
  graphs.run(
      key,
      [&](Proposal mine) {
        proposed.push_back(mine);
        return Agreed{mine.level, proposed.size() > 1};
      },
      d.doubled());
  REQUIRE(proposed.size() == 2);  // the launch proposed, then the new capture's success
  CHECK(proposed[0].level == GraphReplay::kLaunch);
  CHECK(proposed[0].capture == 0);
  CHECK(proposed[1].capture == 1);
  CHECK(graphs.captures() == 2);
  CHECK(graphs.launches() == 2);
  CHECK(d.value() == 1.5f * 8);
}

TEST_CASE("graph replay: a capture that failed on another rank turns replay off here too",
          "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  graphs.run(key, alone, d.doubled());
  int agreements = 0;
  // The proposal (capture) is agreed; then another rank reports that its capture failed.
  graphs.run(
      key,
      [&](Proposal mine) {
        return ++agreements == 1 ? alone(mine) : Agreed{GraphReplay::kIssue, true};
      },
      d.doubled());
  CHECK(agreements == 2);
  CHECK_FALSE(graphs.enabled());
  CHECK(graphs.launches() == 0);
  CHECK(d.value() == 6.0f);  // the second call ran once, issued
}

// `calls` in-place sums of a buffer of `count` floats, holding rank + 1 at first, posted back to
// back; then every element must be S * n^(calls - 1), S = n(n + 1)/2 (exact in float here).
// `before(call)` runs before each call; `replayable`: as a variable's all_reduce (the runtime's
// own buffer).
void sumRepeatedly(
    RankContext& ctx, size_t count, int calls, const std::function<void(int)>& before = [](int) {},
    bool replayable = true) {
  Device& device = ctx.device();
  const int n = ctx.size();
  std::vector<float> values(count, float(ctx.rank() + 1));
  void* buffer = device.allocate(count * sizeof(float));
  Waiter waiter = ctx.waiter("repeated stand-in all_reduces");
  device.copy(buffer, values.data(), count * sizeof(float), CopyKind::HostToDevice);
  device.synchronize(waiter);
  for (int call = 0; call < calls; ++call) {
    before(call);
    AllReduceArgs args{buffer, count, DType::Float32, ReduceOp::Sum};
    args.replayable = replayable;
    ncclOf(ctx).allReduce(args, waiter);
  }
  device.copy(values.data(), buffer, count * sizeof(float), CopyKind::DeviceToHost);
  device.synchronize(waiter);
  float want = float(n * (n + 1) / 2);
  for (int call = 1; call < calls; ++call)
    want *= float(n);
  for (size_t i = 0; i < count; ++i) {
    if (values[i] != want) {
      throw std::runtime_error(
          str("rank ", ctx.rank(), ": element ", i, " is ", values[i], ", expected ", want));
    }
  }
  device.release(buffer);
}

TEST_CASE("small all_reduces are replayed as graphs on every rank, and stay exact", "[coll]") {
  const int n = GENERATE(2, 3);
  const auto factory = standinFactory();
  runOnRanks(*factory, n, [](RankContext& ctx) {
    const GraphReplay& graphs = ncclOf(ctx).graphs();
    sumRepeatedly(ctx, 1000, 5);  // issued, captured + launched, launched x 3
    if (graphs.captures() != 1 || graphs.launches() != 4) {
      throw std::runtime_error(str("rank ", ctx.rank(), ": ", graphs.captures(), " capture(s), ",
                                   graphs.launches(), " launch(es); want 1 and 4"));
    }
    // Over kGraphMaxBytes: issued every time.
    sumRepeatedly(ctx, NcclCommunicator::kGraphMaxBytes / sizeof(float) + 1, 3);
    if (graphs.captures() != 1) throw std::runtime_error("a large all_reduce was captured");
    // Not the runtime's own buffer (a plugin's, a caller's): issued every time.
    sumRepeatedly(
        ctx, 1000, 3, [](int) {}, /*replayable=*/false);
    if (graphs.captures() != 1) throw std::runtime_error("a caller's buffer was captured");
    // A list (one group): replayed as one graph, avg's scaling pass (3 ranks) after it.
    Device& device = ctx.device();
    Waiter waiter = ctx.waiter("a stand-in all_reduce list");
    std::vector<float> a(10, float(ctx.rank())), b(20, 1.0f);
    void* da = device.allocate(a.size() * sizeof(float));
    void* db = device.allocate(b.size() * sizeof(float));
    for (int call = 0; call < 3; ++call) {
      device.copy(da, a.data(), a.size() * sizeof(float), CopyKind::HostToDevice);
      device.copy(db, b.data(), b.size() * sizeof(float), CopyKind::HostToDevice);
      AllReduceArgs list[] = {{da, a.size(), DType::Float32, ReduceOp::Max},
                              {db, b.size(), DType::Float32, ReduceOp::Avg}};
      for (AllReduceArgs& args : list)
        args.replayable = true;
      ncclOf(ctx).allReduceList(list, waiter);
      std::vector<float> ra(a.size()), rb(b.size());
      device.copy(ra.data(), da, ra.size() * sizeof(float), CopyKind::DeviceToHost);
      device.copy(rb.data(), db, rb.size() * sizeof(float), CopyKind::DeviceToHost);
      device.synchronize(waiter);
      if (ra != std::vector<float>(a.size(), float(ctx.size() - 1)) ||
          rb != std::vector<float>(b.size(), 1.0f)) {
        throw std::runtime_error(str("rank ", ctx.rank(), ": list call ", call, " is wrong"));
      }
    }
    if (graphs.launches() != 4 + 2) {
      throw std::runtime_error(str("rank ", ctx.rank(), ": the list was launched ",
                                   graphs.launches() - 4, " time(s), want 2"));
    }
    device.release(da);
    device.release(db);
  });
  INFO(ledgerReport(n));
  CHECK(standin::ledger().violations.load() == 0);
  CHECK(leftoverIds() == 0);
}

TEST_CASE("a rank whose graphs went makes every rank issue the call, then capture again",
          "[coll]") {
  const int n = GENERATE(2, 3);
  const auto factory = standinFactory();
  runOnRanks(*factory, n, [](RankContext& ctx) {
    Device& device = ctx.device();
    // Rank 1 alone releases device memory before the third call (gather's scratch grows on
    // non-root ranks only): its graphs go, the others' stay.
    sumRepeatedly(ctx, 1000, 6, [&](int call) {
      if (ctx.rank() == 1 && call == 2) device.release(device.allocate(64));
    });
    const GraphReplay& graphs = ncclOf(ctx).graphs();
    // Issued, captured + launched, issued by all (rank 1 had no graph), captured + launched,
    // launched, launched.
    if (graphs.captures() != 2 || graphs.launches() != 4) {
      throw std::runtime_error(str("rank ", ctx.rank(), ": ", graphs.captures(), " capture(s), ",
                                   graphs.launches(), " launch(es); want 2 and 4"));
    }
  });
  INFO(ledgerReport(n));
  CHECK(standin::ledger().violations.load() == 0);  // no rank launched what another issued
}

TEST_CASE("a capture that fails on one rank: every rank issues the call, and replays no more",
          "[coll]") {
  standin::Faults faults;
  faults.capture_fails_rank = 1;
  const auto factory = standinFactory(faults);
  runOnRanks(*factory, 2, [](RankContext& ctx) {
    sumRepeatedly(ctx, 1000, 4);  // issued; capture fails on rank 1: issued; issued; issued
    const GraphReplay& graphs = ncclOf(ctx).graphs();
    if (graphs.enabled() || graphs.captures() != 0 || graphs.launches() != 0) {
      throw std::runtime_error(str("rank ", ctx.rank(), ": replay ",
                                   graphs.enabled() ? "on" : "off", ", ", graphs.captures(),
                                   " capture(s), ", graphs.launches(), " launch(es)"));
    }
  });
  INFO(ledgerReport(2));
  CHECK(standin::ledger().violations.load() == 0);
}

TEST_CASE("the stand-in flags ranks that launch a graph of a call another rank issues", "[coll]") {
  const auto factory = standinFactory();
  RankOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const RankRun run = launchRanks(
      *factory, 2,
      [](RankContext& ctx) {
        // GraphReplay without agreement: each rank goes by what it knows alone.
        auto& gpu = dynamic_cast<NcclDevice&>(ctx.device());
        GraphReplay graphs(gpu, true);
        Device& device = ctx.device();
        void* buffer = device.allocate(64 * sizeof(float));
        const uint64_t key[] = {reinterpret_cast<uintptr_t>(buffer)};
        const ncclComm_t comm = ncclOf(ctx).comm();
        Waiter waiter = ctx.waiter("mixed replays");
        for (int call = 0; call < 3; ++call) {
          if (ctx.rank() == 1 && call == 2) device.release(device.allocate(64));
          graphs.run(key, alone, [&] {
            (void)standin::standinNccl().allReduce(buffer, buffer, 64, ncclFloat32, ncclSum, comm,
                                                   gpu.stream());
          });
        }
        device.synchronize(waiter);
      },
      options);
  INFO(run.describe() << ledgerReport(2));
  CHECK_THAT(standin::violationLog(), Contains("rank 0's from a graph, rank 1's issued") ||
                                          Contains("rank 1's issued, rank 0's from a graph"));
}

TEST_CASE("a replayed all_reduce that fails on the stream is reported as an issued one",
          "[coll][fault]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Collective, 1, 3};  // rank 1's fourth: the graph's third launch
  const auto factory = standinFactory(faults);
  RankOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const RankRun run = launchRanks(
      *factory, 2, [](RankContext& ctx) { sumRepeatedly(ctx, 100, 5); }, options);
  INFO(run.describe() << ledgerReport(2));
  // The abort destroyed the graphs first (NCCL's abort waits for them).
  CHECK_THAT(standin::violationLog(), !Contains("holding its calls alive"));
  CHECK_THAT(run.ranks[1].failure, Contains("NCCL reported an error while the GPU was working") &&
                                       Contains("injected failure of ncclAllReduce") &&
                                       Contains("(launched from a graph)"));
  CHECK_FALSE(run.ranks[0].failure.empty());
  requireNothingLeft(run, 2);
}

}  // namespace
}  // namespace synk::test
