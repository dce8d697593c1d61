// Fashion-MNIST from Debian's dataset-fashion-mnist (scripts/install-deps installs it) and the
// synthetic data: shapes, ranges, the data set's known class balance, refusals naming the file.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <vector>

#include "synk/training/datasets.h"
#include "synk/training/idx_reader.h"

namespace synk::training {
namespace {

TEST_CASE("Fashion-MNIST loads as 784 features in [0, 1] with 6,000 and 1,000 of each class",
          "[training]") {
  const Split data = loadFashionMnist();
  CHECK(data.train.x.shape() == Shape{60000, 784});
  CHECK(data.test.x.shape() == Shape{10000, 784});
  CHECK(data.train.classes == 10);
  for (const Dataset* set : {&data.train, &data.test}) {
    std::vector<int64_t> counts(10, 0);
    const int32_t* labels = set->y.as<int32_t>();
    for (int64_t i = 0; i < set->rows(); ++i)
      ++counts[static_cast<size_t>(labels[i])];
    CHECK(counts == std::vector<int64_t>(10, set->rows() / 10));
    const float* x = set->x.as<float>();
    const auto [lo, hi] = std::minmax_element(x, x + set->x.size());
    CHECK(*lo == 0.0f);
    CHECK(*hi == 1.0f);
  }
}

TEST_CASE("a broken Fashion-MNIST directory is refused naming the file", "[training]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("synk_fashion_test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"}) {
    std::filesystem::copy_file(defaultFashionMnistDir() + "/" + name, dir / name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  CHECK_THROWS_WITH(loadFashionMnist(dir.string()),
                    Catch::Contains("t10k-images-idx3-ubyte.gz: cannot open"));
  // Labels in place of images: a wrong shape.
  std::filesystem::copy_file(dir / "train-labels-idx1-ubyte.gz", dir / "train-images-idx3-ubyte.gz",
                             std::filesystem::copy_options::overwrite_existing);
  CHECK_THROWS_WITH(loadFashionMnist(dir.string()),
                    Catch::Contains("train-images-idx3-ubyte.gz: expected uint8 images (n, rows, "
                                    "cols), found uint8 (60000,)"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("synthetic data has the asked shape, is deterministic and uses every class",
          "[training]") {
  const Dataset a = syntheticClassification(500, 33, 7, 4);
  const Dataset b = syntheticClassification(500, 33, 7, 4);
  const Dataset c = syntheticClassification(500, 33, 7, 5);
  CHECK(a.x.shape() == Shape{500, 33});
  CHECK(a.classes == 7);
  CHECK(a.x.toVector<float>() == b.x.toVector<float>());
  CHECK(a.y.toVector<int32_t>() == b.y.toVector<int32_t>());
  CHECK(a.x.toVector<float>() != c.x.toVector<float>());
  std::vector<int> seen(7, 0);
  for (int32_t label : a.y.toVector<int32_t>())
    seen.at(static_cast<size_t>(label)) = 1;
  CHECK(seen == std::vector<int>(7, 1));
  CHECK_THROWS_WITH(syntheticClassification(10, 0, 2, 1), Catch::Contains("features > 0"));
}

}  // namespace
}  // namespace synk::training
