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
  CHECK(tailChunks(small, 2) == 1);              // 140 bytes < 4 x 64
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

// Split blocks of the rows exchange (mlp_config.h): which blocks split, in how many chunks of
// pieces, and that the pieces tile W's rows.
TEST_CASE("blocks split over the ranks where they pay, in pieces that tile W's rows", "[plugins]") {
  auto splits = [](Config config, int ranks) {
    std::vector<BlockSplit> out;
    for (int l = 0; l < config.layers(); ++l) {
      out.push_back(blockSplitOf(config, l, ranks));
      const BlockSplit& s = out.back();
      if (s.chunks > 0) REQUIRE(s.chunks * ranks * s.piece == config.dims[l]);
    }
    return out;
  };
  auto chunks = [](const std::vector<BlockSplit>& s) {
    std::vector<int> out;
    for (const BlockSplit& b : s)
      out.push_back(b.chunks);
    return out;
  };
  // The scaling MLP: the 4096 x 4096 blocks split, the first in 4 chunks (its 8.4 M weights a
  // rank are at least 4 x kSplitFloats), the 4096 x 10 block (41 k weights) stays whole.
  Config scaling = shape({4096, 4096, 4096, 4096, 4096, 10}, 0);
  CHECK(chunks(splits(scaling, 2)) == std::vector<int>{4, 1, 1, 1, 0});
  CHECK(splits(scaling, 2)[0].piece == 512);
  CHECK(splits(scaling, 2)[1].piece == 2048);
  CHECK(chunks(splits(scaling, 4)) == std::vector<int>{4, 1, 1, 1, 0});
  CHECK(chunks(splits(scaling, 3)) == std::vector<int>{0, 0, 0, 0, 0});  // 3 divides no 4096
  CHECK(chunks(splits(scaling, 1)) == std::vector<int>{0, 0, 0, 0, 0});
  // A first block too small for 4 chunks a rank is split in one.
  CHECK(chunks(splits(shape({1024, 2048, 10}, 0), 2)) == std::vector<int>{1, 0});
  // all: every block whose rows divide, whatever its size.
  Config small = shape({24, 6, 4, 3}, 0);
  small.split_blocks = SplitBlocks::All;
  CHECK(chunks(splits(small, 2)) == std::vector<int>{4, 1, 1});
  CHECK(chunks(splits(small, 3)) == std::vector<int>{4, 1, 0});
  CHECK(chunks(splits(small, 5)) == std::vector<int>{0, 0, 0});
  // Only SGD inside the GEMMs splits; none splits nothing.
  Config momentum = scaling;
  momentum.rule = compute::Rule::Momentum;
  CHECK(chunks(splits(momentum, 2)) == std::vector<int>{0, 0, 0, 0, 0});
  Config unfused = scaling;
  unfused.fuse_update = false;
  CHECK(chunks(splits(unfused, 2)) == std::vector<int>{0, 0, 0, 0, 0});
  Config none = scaling;
  none.split_blocks = SplitBlocks::None;
  CHECK(chunks(splits(none, 2)) == std::vector<int>{0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace synk::mlp
