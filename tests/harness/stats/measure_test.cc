// harness/measure.h against cases computed by hand: nccl-tests' bus-bandwidth factors, algbw and
// busbw in GB/s, and byte counts as the tables print them. (The statistics, medians, percentiles
// and bootstrap intervals, are stats.h's: tests/harness/stats/stats_test.cc.)
#include <catch2/catch.hpp>

#include "synk/harness/stats/measure.h"

using namespace synk::harness;

TEST_CASE("busbw factors are nccl-tests' per collective and rank count", "[harness]") {
  CHECK(busbwFactor(Collective::AllReduce, 1) == 0);
  CHECK(busbwFactor(Collective::AllReduce, 2) == 1);
  CHECK(busbwFactor(Collective::AllReduce, 4) == 1.5);
  CHECK(busbwFactor(Collective::AllReduce, 8) == 1.75);
  for (Collective c : {Collective::AllGather, Collective::Gather, Collective::ReduceScatter,
                       Collective::Scatter}) {
    CHECK(busbwFactor(c, 1) == 0);
    CHECK(busbwFactor(c, 4) == 0.75);
    CHECK(busbwFactor(c, 8) == 0.875);
  }
  for (Collective c : {Collective::Broadcast, Collective::Reduce}) {
    CHECK(busbwFactor(c, 1) == 1);
    CHECK(busbwFactor(c, 8) == 1);
  }
}

TEST_CASE("algbw and busbw in GB/s (1e9 bytes per second)", "[harness]") {
  CHECK(algbwGBps(1e9, 1.0) == 1.0);
  CHECK(algbwGBps(256e6, 0.001) == Approx(256.0));
  CHECK(algbwGBps(1024, 0) == 0);  // no time measured: no bandwidth, not infinity
  CHECK(algbwGBps(1024, -1) == 0);
  // 1 GiB all_reduce on 4 ranks in 50 ms: algbw 21.47 GB/s, busbw 1.5 times that.
  const double bytes = 1024.0 * 1024 * 1024;
  CHECK(algbwGBps(bytes, 0.05) == Approx(21.474836));
  CHECK(busbwGBps(Collective::AllReduce, 4, bytes, 0.05) == Approx(32.212254));
  CHECK(busbwGBps(Collective::Broadcast, 4, bytes, 0.05) == Approx(21.474836));
  CHECK(busbwGBps(Collective::AllGather, 2, 2e9, 1.0) == 1.0);
}

TEST_CASE("formatBytes: binary units, whole numbers without decimals", "[harness]") {
  CHECK(formatBytes(0) == "0 B");
  CHECK(formatBytes(8) == "8 B");
  CHECK(formatBytes(1023) == "1023 B");
  CHECK(formatBytes(1024) == "1 KiB");
  CHECK(formatBytes(1536) == "1.5 KiB");
  CHECK(formatBytes(128 * 1024) == "128 KiB");
  CHECK(formatBytes(32.0 * 1024 * 1024) == "32 MiB");
  CHECK(formatBytes(1024.0 * 1024 * 1024) == "1 GiB");
  CHECK(formatBytes(3.0 * 1024 * 1024 * 1024 * 1024) == "3 TiB");
  CHECK(formatBytes(2048.0 * 1024 * 1024 * 1024 * 1024) == "2048 TiB");  // TiB is the largest
  CHECK(formatBytes(1000) == "1000 B");
  CHECK(formatBytes(1100) == "1.1 KiB");
}
