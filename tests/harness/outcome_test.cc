// harness/run/outcome.h: a repetition's report survives the pipe whole, and a report cut short
// (its process died while writing) or garbled is refused with RunFailed, never misread.
#include <catch2/catch.hpp>

#include "synk/harness/base/errors.h"
#include "synk/harness/run/outcome.h"

using namespace synk::harness;

namespace {

JobOutcome sample() {
  JobOutcome o;
  o.status = PointStatus::ok;
  o.startup_ns = 1234;
  PointOutcome& p = o.points.emplace_back();
  p.point = 3;
  p.message = "fine";
  p.steps = 2;
  p.samples = {{0, 0, 0, 100, kNoValue, kNoValue}, {0, 1, 1, 200, 50, 150}};
  GpuReading g;
  g.gpu = 1;
  g.seconds = 0.5;
  g.energy_j = 2.5;
  g.throttle_reasons = 0x4;
  p.gpus.push_back(g);
  RankTimesRecord t;
  t.step = 1;
  t.rank = 1;
  t.work_ns = 7;
  t.device_ns = 9;
  p.rank_times.push_back(t);
  return o;
}

}  // namespace

TEST_CASE("a repetition's outcome round-trips through its wire format", "[harness]") {
  const JobOutcome back = decodeOutcome(encodeOutcome(sample()));
  CHECK(back.status == PointStatus::ok);
  CHECK(back.startup_ns == 1234);
  REQUIRE(back.points.size() == 1);
  const PointOutcome& p = back.points[0];
  CHECK(p.point == 3);
  CHECK(p.message == "fine");
  REQUIRE(p.samples.size() == 2);
  CHECK(p.samples[1].collective_ns == 150);
  REQUIRE(p.gpus.size() == 1);
  CHECK(p.gpus[0].energy_j == 2.5);
  CHECK_FALSE(p.gpus[0].sm_mhz);
  CHECK(p.gpus[0].throttle_reasons == 0x4);
  REQUIRE(p.rank_times.size() == 1);
  CHECK(p.rank_times[0].device_ns == 9);
}

TEST_CASE("a report cut short or garbled is refused", "[harness]") {
  const std::string whole = encodeOutcome(sample());
  CHECK_THROWS_WITH(decodeOutcome(""), Catch::Contains("reported nothing"));
  for (size_t cut : {size_t{3}, size_t{20}, whole.size() / 2, whole.size() - 1}) {
    INFO("cut at " << cut << " of " << whole.size());
    CHECK_THROWS_AS(decodeOutcome(whole.substr(0, cut)), RunFailed);
  }
  std::string garbled = whole;
  garbled[0] ^= 0x55;
  CHECK_THROWS_WITH(decodeOutcome(garbled), Catch::Contains("garbled"));
  CHECK_THROWS_WITH(decodeOutcome(whole + "x"), Catch::Contains("garbled"));
}

TEST_CASE("a point status is stored, exported and printed as its word, and read back",
          "[harness]") {
  const std::vector<std::pair<PointStatus, std::string>> words = {
      {PointStatus::ok, "ok"},
      {PointStatus::wrong, "wrong"},
      {PointStatus::failed, "failed"},
      {PointStatus::skipped, "skipped"},
      {PointStatus::interrupted, "interrupted"}};
  for (const auto& [status, word] : words) {
    CHECK(toString(status) == word);
    CHECK(parsePointStatus(word) == status);
    JobOutcome o = sample();
    o.status = o.points[0].status = status;
    const JobOutcome back = decodeOutcome(encodeOutcome(o));
    CHECK(back.status == status);
    CHECK(back.points[0].status == status);
  }
  CHECK_FALSE(parsePointStatus("timeout"));
  CHECK_FALSE(parsePointStatus("OK"));
  CHECK_FALSE(parsePointStatus(""));
  CHECK(pointStatusNames() == "ok, wrong, failed, skipped, interrupted");
}
