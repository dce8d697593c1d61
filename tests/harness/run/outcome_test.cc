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

TEST_CASE("every field of a GPU reading survives the pipe, present or absent", "[harness]") {
  JobOutcome o = sample();
  GpuReading full;
  full.gpu = 7;
  full.seconds = 1.25;
  full.sm_mhz = 1980;
  full.memory_mhz = 2619;
  full.power_w = 301.5;
  full.energy_j = 376.875;
  full.temperature_c = 61;
  full.throttle_reasons = 0x24;
  full.throttled_s = 0.125;
  GpuReading empty;  // no optional field set: each comes back absent, not 0
  empty.gpu = 2;
  o.points[0].gpus = {full, empty};
  const std::vector<GpuReading> back = decodeOutcome(encodeOutcome(o)).points.at(0).gpus;
  REQUIRE(back.size() == 2);
  const GpuReading& g = back[0];
  CHECK(g.gpu == 7);
  CHECK(g.seconds == 1.25);
  CHECK(g.sm_mhz == 1980);
  CHECK(g.memory_mhz == 2619);
  CHECK(g.power_w == 301.5);
  CHECK(g.energy_j == 376.875);
  CHECK(g.temperature_c == 61);
  CHECK(g.throttle_reasons == 0x24);
  CHECK(g.throttled_s == 0.125);
  const GpuReading& e = back[1];
  CHECK(e.gpu == 2);
  CHECK(e.seconds == 0);
  CHECK_FALSE(e.sm_mhz);
  CHECK_FALSE(e.memory_mhz);
  CHECK_FALSE(e.power_w);
  CHECK_FALSE(e.energy_j);
  CHECK_FALSE(e.temperature_c);
  CHECK_FALSE(e.throttled_s);
  CHECK(e.throttle_reasons == 0);
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
  // A status word that is none: the job's (the first "ok" on the wire) and the point's (the next).
  for (int nth : {0, 1}) {
    std::string bad = whole;
    size_t at = bad.find("ok");
    if (nth == 1) at = bad.find("ok", at + 2);
    REQUIRE(at != std::string::npos);
    bad.replace(at, 2, "OK");
    CHECK_THROWS_WITH(decodeOutcome(bad), Catch::Contains("garbled (status 'OK')"));
  }
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
