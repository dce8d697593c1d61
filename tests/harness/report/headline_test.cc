// The sentence a report leads with (harness/headline.h), on stored runs with known values.
#include <catch2/catch.hpp>

#include "synk/harness/report/text/headline.h"
#include "tests/harness/synthetic_store.h"
#include "tests/harness/temp_dir.h"

using namespace synk::harness;
using namespace synk::harness::test;

namespace {

SyntheticPoint cuda(const std::string& ranks, const std::string& collectives, double seconds) {
  return {{{"backend", "cuda"}, {"batch", "64"}, {"ranks", ranks}, {"collectives", collectives}},
          std::vector<double>(5, seconds)};
}

}  // namespace

TEST_CASE("headline: efficiency and speedup at the most GPUs, NCCL against host staging",
          "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("h.db"), Store::Mode::Write);
  // Weak scaling: 1 GPU 1.00 ms a step; 2 GPUs 1.04 ms over NCCL (96 %), 3.22 ms host-staged.
  const int64_t run = storeRun(store, syntheticRun("mlp", "c1", "t1"),
                               {cuda("1", "nccl", 1.00e-3), cuda("2", "nccl", 1.04e-3),
                                cuda("1", "host", 1.00e-3), cuda("2", "host", 3.22e-3)});
  const RunData data = loadRun(store, run);
  const std::vector<std::string> lines = headline(data, Scaling::Weak);
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::StartsWith("2 GPUs (host staging): 31 % efficiency, 0.62x"));
  CHECK_THAT(lines[1], Catch::StartsWith("2 GPUs (NCCL): 96 % efficiency, 1.92x (weak scaling, "
                                         "batch 64 per rank)"));
  CHECK(lines[2] == "NCCL 3.10x faster than host staging at 2 GPUs, batch 64");
}

TEST_CASE("headline: a run over nodes names nodes x ranks per node", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("n.db"), Store::Mode::Write);
  auto point = [](int nodes, double seconds) {
    return SyntheticPoint{{{"backend", "cpu"},
                           {"batch", "32"},
                           {"nodes", std::to_string(nodes)},
                           {"ranks", std::to_string(nodes)},
                           {"ranks_per_node", "1"}},
                          std::vector<double>(5, seconds)};
  };
  // 1 node 1.0 ms, 2 nodes 1.25 ms a step: 2 x 1.0 / 1.25 = 1.6x, 80 %.
  const int64_t run =
      storeRun(store, syntheticRun("nodes", "c1", "t1"), {point(1, 1e-3), point(2, 1.25e-3)});
  const std::vector<std::string> lines = headline(loadRun(store, run), Scaling::Weak);
  REQUIRE_FALSE(lines.empty());
  CHECK_THAT(lines[0], Catch::StartsWith("2 nodes x 1 CPU rank: 80 % efficiency, 1.60x"));
}

TEST_CASE("headline: collectives name each backend's best busbw and their ratio", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("c.db"), Store::Mode::Write);
  RunRecord record = syntheticRun("collectives", "c1", "t1");
  record.kind = "collectives";
  auto point = [](const std::string& backend, const std::string& bytes, double seconds) {
    return SyntheticPoint{{{"backend", backend},
                           {"ranks", "2"},
                           {"op", "all_reduce"},
                           {"dtype", "float32"},
                           {"redop", "sum"},
                           {"root", "-1"},
                           {"bytes", bytes},
                           {"placement", "in"}},
                          {seconds}};
  };
  // 32 MiB on 2 ranks: busbw = size / time (factor 1 for 2 ranks).
  const int64_t run = storeRun(
      store, record,
      {point("nccl", "33554432", 33554432 / 300e9), point("host", "33554432", 33554432 / 100e9),
       point("nccl", "8", 1e-5), point("host", "8", 2e-5)});
  const std::vector<std::string> lines = headline(loadRun(store, run), Scaling::Weak);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "all_reduce, 2 ranks: NCCL busbw 300.0 GB/s at 32 MiB; host staging busbw 100.0 GB/s at "
        "32 MiB; NCCL 3.0x host staging at 32 MiB");
}

TEST_CASE("headline: failures, skips and noise are counted", "[harness]") {
  TempDir dir;
  Store store = Store::open(dir.file("f.db"), Store::Mode::Write);
  SyntheticPoint failed = cuda("2", "nccl", 1e-3);
  failed.status = PointStatus::failed;
  failed.values_s.clear();
  SyntheticPoint noisy = cuda("1", "nccl", 1e-3);
  noisy.values_s = {0.8e-3, 0.8e-3, 0.8e-3, 2.6e-3, 2.6e-3};
  const int64_t run = storeRun(store, syntheticRun("mlp", "c1", "t1"), {noisy, failed});
  const std::vector<std::string> lines = headline(loadRun(store, run), Scaling::Weak);
  CHECK(lines.back() == "1 point(s) failed, 1 point(s) with noise warnings");
  CHECK(sizeText(33554432) == "32 MiB");
  CHECK(sizeText(1000) == "1000 B");
}
