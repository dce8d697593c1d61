#include <cstdlib>
#include <random>
#include <vector>

#include "synk/training/datasets.h"
#include "synk/training/idx_reader.h"

namespace synk::training {
namespace {

Dataset loadPair(const std::string& dir, const std::string& prefix, int64_t expected_rows) {
  const std::string images_file = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  const std::string labels_file = dir + "/" + prefix + "-labels-idx1-ubyte.gz";
  const Array images = readIdx(images_file);
  const Array labels = readIdx(labels_file);
  if (images.dtype() != DType::UInt8 || images.ndim() != 3) {
    throw IdxError(str(images_file, ": expected uint8 images (n, rows, cols), found ",
                       dtypeName(images.dtype()), " ", shapeString(images.shape())));
  }
  if (labels.dtype() != DType::UInt8 || labels.ndim() != 1) {
    throw IdxError(str(labels_file, ": expected uint8 labels (n,), found ",
                       dtypeName(labels.dtype()), " ", shapeString(labels.shape())));
  }
  const int64_t n = images.shape()[0];
  if (labels.shape()[0] != n) {
    throw IdxError(str(labels_file, " has ", labels.shape()[0], " labels but ", images_file,
                       " has ", n, " images"));
  }
  if (expected_rows >= 0 && n != expected_rows) {
    throw IdxError(str(images_file, " has ", n, " images; Fashion-MNIST's ", prefix, " set has ",
                       expected_rows));
  }
  const int64_t features = images.shape()[1] * images.shape()[2];
  Dataset out;
  out.classes = 10;
  out.x = Array(DType::Float32, {n, features});
  out.y = Array(DType::Int32, {n});
  const uint8_t* pixels = images.as<uint8_t>();
  float* x = out.x.as<float>();
  for (int64_t i = 0; i < n * features; ++i)
    x[i] = static_cast<float>(pixels[i]) * (1.0f / 255.0f);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t label = labels.as<uint8_t>()[i];
    if (label >= out.classes) {
      throw IdxError(
          str(labels_file, ": label ", int(label), " of sample ", i, " is outside 0..9"));
    }
    out.y.as<int32_t>()[i] = label;
  }
  return out;
}

}  // namespace

std::string defaultFashionMnistDir() {
  const char* dir = std::getenv("SYNK_FASHION_MNIST");
  return dir && *dir ? dir : "/usr/share/datasets/fashion-mnist";
}

Split loadFashionMnist(const std::string& dir) {
  return {loadPair(dir, "train", 60000), loadPair(dir, "t10k", 10000)};
}

Dataset syntheticClassification(int64_t rows, int64_t features, int classes, uint64_t seed,
                                uint64_t teacher_seed) {
  if (rows < 0 || features <= 0 || classes <= 0) {
    throw InvalidArgument(str("synthetic data needs rows >= 0, features > 0 and classes > 0; got ",
                              rows, ", ", features, ", ", classes));
  }
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::mt19937_64 teacher_rng(teacher_seed ^ 0x5eed5eed5eedull);
  std::vector<float> teacher(static_cast<size_t>(features * classes));
  for (float& w : teacher)
    w = uniform(teacher_rng);
  std::mt19937_64 rng(seed);
  Dataset out;
  out.classes = classes;
  out.x = Array(DType::Float32, {rows, features});
  out.y = Array(DType::Int32, {rows});
  float* x = out.x.as<float>();
  std::vector<double> score(static_cast<size_t>(classes));
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * features;
    std::fill(score.begin(), score.end(), 0.0);
    for (int64_t f = 0; f < features; ++f) {
      row[f] = uniform(rng);
      for (int c = 0; c < classes; ++c)
        score[c] += double(row[f]) * teacher[f * classes + c];
    }
    int best = 0;
    for (int c = 1; c < classes; ++c)
      best = score[c] > score[best] ? c : best;
    out.y.as<int32_t>()[r] = best;
  }
  return out;
}

}  // namespace synk::training
