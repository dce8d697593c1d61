// Small all_reduces replayed as CUDA graphs (collectives/cuda/nccl/graph_replay.h), against the
// NCCL stand-in, whose stream records what is enqueued while it captures and runs it again at
// every launch: GraphReplay's rule on one stand-in device (seen once: issued; twice: captured
// and launched; graphs dropped when device memory is released, when a key falls out, or for
// good when a capture fails), then NcclCommunicator on forked ranks — every replayed all_reduce
// still sums, exactly, and a fault in a replayed one is reported as in an issued one.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include "synk/collectives/cuda/nccl/graph_replay.h"
#include "tests/collectives/nccl_standin_checks.h"
#include "tests/support/nccl_standin/standin_device.h"

namespace synk::test {
namespace {

using Catch::Matchers::Contains;

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
    graphs.run(key, d.doubled());
    want *= 2;
    CHECK(d.value() == want);  // every launch runs the work again, and only once
  }
  CHECK(graphs.captures() == 1);
  CHECK(graphs.launches() == 3);

  SECTION("released device memory drops every graph: issued, then captured again") {
    d.device.release(d.device.allocate(16));
    graphs.run(key, d.doubled());
    CHECK(graphs.launches() == 3);
    graphs.run(key, d.doubled());
    CHECK(graphs.captures() == 2);
    CHECK(graphs.launches() == 4);
    CHECK(d.value() == want * 4);
  }
  SECTION("a key pushed out by `capacity` newer ones starts over") {
    GraphReplay small(d.device, true, 2);
    const uint64_t a[] = {1}, b[] = {2}, c[] = {3};
    for (const auto* k : {a, a, b, c, a, a})
      small.run(std::span(k, 1), d.doubled());
    CHECK(small.captures() == 2);  // a at its second call; a again after it fell out
    CHECK(small.launches() == 2);
    CHECK(d.value() == want * 64);
  }
  SECTION("off: always issued") {
    GraphReplay off(d.device, false);
    for (int call = 0; call < 3; ++call)
      off.run(key, d.doubled());
    CHECK(off.captures() == 0);
    CHECK(d.value() == want * 8);
  }
}

TEST_CASE("graph replay: an error while capturing ends the capture and reaches the caller",
          "[coll]") {
  OneDevice d;
  GraphReplay graphs(d.device, true);
  const uint64_t key[] = {1};
  graphs.run(key, d.doubled());
  CHECK_THROWS_WITH(graphs.run(key, [] { throw InvalidArgument("bad call"); }), "bad call");
  // The stream is not left capturing: the next call runs (issued, then captured).
  graphs.run(key, d.doubled());
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
  graphs.run(key, query_inside);  // first sighting: issued (no capture to spoil)
  graphs.run(key, query_inside);  // captured, invalidated: issued as it is instead
  CHECK_FALSE(graphs.enabled());
  graphs.run(key, d.doubled());
  CHECK(graphs.captures() == 0);
  CHECK(graphs.launches() == 0);
  CHECK(d.value() == 1.5f * 8);  // each call's work ran once
}

// `calls` in-place sums of a buffer of `count` floats, holding rank + 1 at first, posted back to
// back; then every element must be S * n^(calls - 1), S = n(n + 1)/2 (exact in float here).
void sumRepeatedly(RankContext& ctx, size_t count, int calls) {
  Device& device = ctx.device();
  const int n = ctx.size();
  std::vector<float> values(count, float(ctx.rank() + 1));
  void* buffer = device.allocate(count * sizeof(float));
  Waiter waiter = ctx.waiter("repeated stand-in all_reduces");
  device.copy(buffer, values.data(), count * sizeof(float), CopyKind::HostToDevice);
  device.synchronize(waiter);
  for (int call = 0; call < calls; ++call)
    ncclOf(ctx).allReduce({buffer, count, DType::Float32, ReduceOp::Sum}, waiter);
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
    // A list (one group): replayed as one graph, avg's scaling pass (3 ranks) after it.
    Device& device = ctx.device();
    Waiter waiter = ctx.waiter("a stand-in all_reduce list");
    std::vector<float> a(10, float(ctx.rank())), b(20, 1.0f);
    void* da = device.allocate(a.size() * sizeof(float));
    void* db = device.allocate(b.size() * sizeof(float));
    for (int call = 0; call < 3; ++call) {
      device.copy(da, a.data(), a.size() * sizeof(float), CopyKind::HostToDevice);
      device.copy(db, b.data(), b.size() * sizeof(float), CopyKind::HostToDevice);
      const AllReduceArgs list[] = {{da, a.size(), DType::Float32, ReduceOp::Max},
                                    {db, b.size(), DType::Float32, ReduceOp::Avg}};
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

TEST_CASE("a replayed all_reduce that fails on the stream is reported as an issued one",
          "[coll][fault]") {
  standin::Faults faults;
  faults.fail = {standin::Call::Collective, 1, 3};  // rank 1's fourth: the graph's second launch
  const auto factory = standinFactory(faults);
  RankOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const RankRun run = launchRanks(
      *factory, 2, [](RankContext& ctx) { sumRepeatedly(ctx, 100, 5); }, options);
  INFO(run.describe() << ledgerReport(2));
  CHECK_THAT(run.ranks[1].failure, Contains("NCCL reported an error while the GPU was working") &&
                                       Contains("injected failure of ncclAllReduce"));
  CHECK_FALSE(run.ranks[0].failure.empty());
  requireNothingLeft(run, 2);
}

}  // namespace
}  // namespace synk::test
