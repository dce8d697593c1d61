// The host versions of kernels.h: plain loops, the reference the CUDA kernels are tested against.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/compute/softmax_math.h"

namespace synk::compute::host {

void fill(float* x, int64_t n, float value) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = value;
}

void scale(float* x, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= alpha;
}

void axpy(int64_t n, float alpha, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

void divideBy(float* dst, const float* src, int64_t n, const float* divisor) {
  const float d = *divisor;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i] / d;
}

void restoreIfInvalid(const float* flag, const float* src, float* dst, int64_t n) {
  if (*flag >= 0.0f) return;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

void sum(const float* x, int64_t n, float* out) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += x[i];
  *out = static_cast<float>(total);
}

void copyMatrix(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows,
                int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(src + i * ld_src, cols, dst + i * ld_dst);
}

void addBias(float* z, int64_t rows, int64_t cols, int64_t ld, const float* bias, bool relu) {
  for (int64_t i = 0; i < rows; ++i) {
    float* row = z + i * ld;
    for (int64_t j = 0; j < cols; ++j) {
      const float v = row[j] + bias[j];
      row[j] = relu && !(v > 0.0f) ? 0.0f : v;
    }
  }
}

void columnSum(const float* x, int64_t rows, int64_t cols, int64_t ld, float alpha,
               const float* y_in, float* y_out) {
  std::vector<double> sums(static_cast<size_t>(cols), 0.0);
  for (int64_t i = 0; i < rows; ++i) {  // row by row: x is read with unit stride
    for (int64_t j = 0; j < cols; ++j)
      sums[j] += x[i * ld + j];
  }
  for (int64_t j = 0; j < cols; ++j)
    y_out[j] = (y_in ? y_in[j] : 0.0f) + alpha * static_cast<float>(sums[j]);
}

void relu(float* z, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float& v = z[i * ld + j];
      v = v > 0.0f ? v : 0.0f;
    }
  }
}

void reluBackward(const float* a, int64_t lda, float* d, int64_t ldd, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (!(a[i * lda + j] > 0.0f)) d[i * ldd + j] = 0.0f;
    }
  }
}

void softmaxCrossEntropy(const CrossEntropyArgs& g) {
  double loss_sum = 0;
  double correct = 0;
  for (int64_t i = 0; i < g.rows; ++i) {
    const float* z = g.logits + i * g.ld;
    const int32_t label = g.labels[i];
    if (label < 0 || label >= g.classes) {
      throw sdk::Error(sdk::Status::InvalidArgument, "label " + std::to_string(label) + " of row " +
                                                         std::to_string(i) + " is outside [0, " +
                                                         std::to_string(g.classes) + ")");
    }
    const softmax_math::RowLoss r =
        softmax_math::row(z, g.classes, label, g.dlogits ? g.dlogits + i * g.ld_d : nullptr);
    loss_sum += r.loss;
    correct += r.best == label ? 1 : 0;
  }
  bool batch_invalid = false;  // another rank's label (this rank's threw above)
  for (int64_t i = 0; g.all_labels && i < g.all_rows; ++i)
    batch_invalid = batch_invalid || g.all_labels[i] < 0 || g.all_labels[i] >= g.classes;
  if (batch_invalid && g.dlogits) {
    for (int64_t i = 0; i < g.rows; ++i)
      std::fill(g.dlogits + i * g.ld_d, g.dlogits + i * g.ld_d + g.classes, 0.0f);
  }
  // A bad label of this rank's threw above: only another rank's can be left.
  softmax_math::writeResults(g, loss_sum, correct, false, batch_invalid);
}

}  // namespace synk::compute::host
