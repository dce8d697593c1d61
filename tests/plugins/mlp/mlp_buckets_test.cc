// The mlp's bucket plan (mlp_reducer.h): whole layers from the last, closed at bucket_bytes, the
// count slot in the first, and the first layer's block in row chunks where it is large.
#include <catch2/catch.hpp>
#include <vector>

#include "synk/plugins/mlp/mlp_reducer.h"

namespace synk::mlp {
namespace {

Config shape(std::vector<int64_t> dims, int64_t bucket_bytes) {
  Config config;
  config.dims = std::move(dims);
  config.bucket_bytes = bucket_bytes;
  return config;
}

// The buckets tile [0, parameters() + 1) without gaps, in decreasing order.
void requireTiling(const Config& config, const std::vector<Bucket>& buckets) {
  int64_t end = config.parameters() + 1;
  for (const Bucket& b : buckets) {
    REQUIRE(b.end == end);
    REQUIRE(b.begin < b.end);
    end = b.begin;
  }
  REQUIRE(end == 0);
}

TEST_CASE("buckets hold whole layers and the first layer is chunked only where it pays",
          "[plugins]") {
  const Config small = shape({6, 5, 4, 3}, 64);  // blocks of 35, 24, 15 floats
  CHECK(tailChunks(small, 2) == 1);               // 140 bytes < 4 x 64
  std::vector<Bucket> buckets = planBuckets(small, 1);
  requireTiling(small, buckets);
  CHECK(buckets.size() == 3);
  CHECK(buckets[0].begin == small.offset(2));

  const Config tiny = shape({6, 5, 4, 3}, 16);
  CHECK(tailChunks(tiny, 1) == 1);  // one rank: nothing to hide
  REQUIRE(tailChunks(tiny, 2) == kTailChunks);
  buckets = planBuckets(tiny, kTailChunks);
  requireTiling(tiny, buckets);
  REQUIRE(buckets.size() == 2 + kTailChunks);
  // The first layer's rows 4-5, 3, 1-2, 0 (5 floats a row), the last chunk first.
  CHECK(buckets[2].begin == 4 * 5);
  CHECK(buckets[3].begin == 3 * 5);
  CHECK(buckets[4].begin == 1 * 5);
  CHECK(buckets[5].begin == 0);

  const Config one = shape({6, 5, 4, 3}, 0);  // 0: one all-reduce after backward
  CHECK(tailChunks(one, 2) == 1);
  buckets = planBuckets(one, 1);
  requireTiling(one, buckets);
  CHECK(buckets.size() == 1);

  const Config scaling = shape({4096, 4096, 4096, 4096, 4096, 10}, int64_t{4} << 20);
  CHECK(tailChunks(scaling, 2) == kTailChunks);
  requireTiling(scaling, planBuckets(scaling, kTailChunks));
}

}  // namespace
}  // namespace synk::mlp
