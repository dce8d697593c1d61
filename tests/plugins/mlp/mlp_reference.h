#pragma once
// A straightforward double-precision mlp for the tests: the same layout as plugins/mlp ([W; b]
// blocks in one flat vector, y = x W + b, ReLU, softmax cross-entropy), forward and backward
// written out plainly, plus a small learnable data set.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace synk::mlp_test {

struct Reference {
  std::vector<int64_t> dims;

  int64_t offset(size_t l) const {
    int64_t at = 0;
    for (size_t k = 0; k < l; ++k)
      at += (dims[k] + 1) * dims[k + 1];
    return at;
  }

  // Mean loss over the rows and the mean gradient of it (same layout as params).
  double lossAndGradient(const std::vector<float>& params, const std::vector<float>& x,
                         const std::vector<int32_t>& y, std::vector<double>* gradient) const {
    const size_t layers = dims.size() - 1;
    const int64_t rows = static_cast<int64_t>(y.size());
    if (gradient) gradient->assign(params.size(), 0.0);
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<std::vector<double>> a(layers + 1);
      a[0].assign(x.begin() + r * dims[0], x.begin() + (r + 1) * dims[0]);
      for (size_t l = 0; l < layers; ++l) {
        const float* p = params.data() + offset(l);
        const int64_t in = dims[l], out = dims[l + 1];
        a[l + 1].assign(out, 0.0);
        for (int64_t j = 0; j < out; ++j) {
          double z = p[in * out + j];  // bias row
          for (int64_t i = 0; i < in; ++i)
            z += a[l][i] * p[i * out + j];
          a[l + 1][j] = (l + 1 < layers && z < 0) ? 0.0 : z;
        }
      }
      const std::vector<double>& z = a[layers];
      double max = z[0], sum = 0;
      for (double v : z)
        max = std::max(max, v);
      for (double v : z)
        sum += std::exp(v - max);
      total += max + std::log(sum) - z[y[r]];
      if (!gradient) continue;
      std::vector<double> delta(z.size());
      for (size_t j = 0; j < z.size(); ++j)
        delta[j] = std::exp(z[j] - max) / sum - (int32_t(j) == y[r] ? 1.0 : 0.0);
      for (size_t l = layers; l-- > 0;) {
        const float* p = params.data() + offset(l);
        double* g = gradient->data() + offset(l);
        const int64_t in = dims[l], out = dims[l + 1];
        std::vector<double> previous(in, 0.0);
        for (int64_t j = 0; j < out; ++j) {
          g[in * out + j] += delta[j] / rows;
          for (int64_t i = 0; i < in; ++i) {
            g[i * out + j] += a[l][i] * delta[j] / rows;
            previous[i] += p[i * out + j] * delta[j];
          }
        }
        for (int64_t i = 0; i < in; ++i)
          previous[i] = a[l][i] > 0 ? previous[i] : 0.0;
        delta = previous;
      }
    }
    return total / rows;
  }
};

// rows samples of `features` uniform features; the label is the argmax of a fixed random linear
// map, so a model can learn it.
struct Samples {
  std::vector<float> x;
  std::vector<int32_t> y;
};

inline Samples makeSamples(int64_t rows, int64_t features, int32_t classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::mt19937 map_rng(12345);
  std::vector<float> map(static_cast<size_t>(features * classes));
  for (float& v : map)
    v = dist(map_rng);
  Samples s;
  for (int64_t r = 0; r < rows; ++r) {
    int32_t best = 0;
    double best_score = -1e300;
    std::vector<float> row(static_cast<size_t>(features));
    for (float& v : row)
      v = dist(rng);
    for (int32_t c = 0; c < classes; ++c) {
      double score = 0;
      for (int64_t f = 0; f < features; ++f)
        score += row[f] * map[f * classes + c];
      if (score > best_score) {
        best_score = score;
        best = c;
      }
    }
    s.x.insert(s.x.end(), row.begin(), row.end());
    s.y.push_back(best);
  }
  return s;
}

}  // namespace synk::mlp_test
