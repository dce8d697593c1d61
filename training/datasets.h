#pragma once
// Data sets for training: Fashion-MNIST from Debian's dataset-fashion-mnist package (gzipped IDX
// files), and synthetic classification data of any shape for benchmarks. Both give float32
// features and int32 labels, the mlp's inputs.
#include <cstdint>
#include <string>

#include "synk/core/array.h"

namespace synk::training {

struct Dataset {
  Array x;  // float32 (rows, features)
  Array y;  // int32 (rows,)
  int classes = 0;
  int64_t rows() const { return y.size(); }
};

struct Split {
  Dataset train;
  Dataset test;
};

// $SYNK_FASHION_MNIST if set, else /usr/share/datasets/fashion-mnist (Debian's package).
std::string defaultFashionMnistDir();

// The four files of `dir` (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-...):
// 60,000 + 10,000 images of 28 x 28 as 784 features in [0, 1], labels 0..9. Throws IdxError
// naming the file and what is wrong: missing, not IDX, a wrong type or shape, images and labels
// of different counts, a label outside 0..9.
Split loadFashionMnist(const std::string& dir = defaultFashionMnistDir());

// `rows` samples of `features` features (uniform in [-1, 1], drawn from `seed`) labelled by a
// random linear teacher (argmax over `classes`, drawn from `teacher`): learnable, deterministic,
// any shape. A training and a test set share the teacher and differ in the seed.
Dataset syntheticClassification(int64_t rows, int64_t features, int classes, uint64_t seed,
                                uint64_t teacher = 0);

}  // namespace synk::training
