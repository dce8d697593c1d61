#pragma once
// Private to plugins/compute: one row of softmax cross-entropy, one definition for the host loop
// and the CUDA kernel (host and device function under nvcc): the same operations in the same
// order on both (their expf and logf still differ by an ulp or so, so host and GPU agree to that).
#include <math.h>
#include <stdint.h>

#include "synk/plugins/compute/kernels.h"

#if !defined(SYNK_COMPUTE_HOST_DEVICE)
#if defined(__CUDACC__)
#define SYNK_COMPUTE_HOST_DEVICE __host__ __device__
#else
#define SYNK_COMPUTE_HOST_DEVICE
#endif
#endif

namespace synk::compute::softmax_math {

struct RowLoss {
  double loss;   // log(sum exp z) - z[label]; NaN for a label outside [0, classes)
  int64_t best;  // the row's arg max (the first of equal maxima)
};

// Row z of `classes` logits with its label: the loss, the prediction, and in d (when given) the
// loss's gradient, softmax(z) - one_hot(label) (NaN everywhere for a label out of range).
SYNK_COMPUTE_HOST_DEVICE inline RowLoss row(const float* z, int64_t classes, int32_t label,
                                            float* d) {
  const bool valid = label >= 0 && label < classes;
  int64_t best = 0;
  for (int64_t j = 1; j < classes; ++j)
    best = z[j] > z[best] ? j : best;
  const float max = z[best];  // subtracted before exp: no overflow
  float total = 0;
  for (int64_t j = 0; j < classes; ++j)
    total += expf(z[j] - max);
  if (d != nullptr) {
    for (int64_t j = 0; j < classes; ++j)
      d[j] = valid ? expf(z[j] - max) / total - (j == label ? 1.0f : 0.0f) : NAN;
  }
  return {valid ? static_cast<double>(max + logf(total) - z[label]) : NAN, best};
}

// The batch's results from its sums over `g.rows` rows: mean loss, accuracy, the rows the
// gradient divides by (-inf after a bad label anywhere in the batch: the update is then an
// identity) and the running metrics (left as they were after a bad label of this rank's own).
SYNK_COMPUTE_HOST_DEVICE inline void writeResults(const CrossEntropyArgs& g, double loss_sum,
                                                  double correct, bool own_invalid,
                                                  bool batch_invalid) {
  const double rows = static_cast<double>(g.rows);
  if (g.mean_loss) *g.mean_loss = g.rows ? static_cast<float>(loss_sum / rows) : 0.0f;
  if (g.accuracy) *g.accuracy = g.rows ? static_cast<float>(correct / rows) : 0.0f;
  if (g.rows_out) {
    *g.rows_out = own_invalid || batch_invalid ? -INFINITY
                  : g.all_labels               ? static_cast<float>(g.batch_rows)
                                               : static_cast<float>(g.rows);
  }
  if (g.metrics_out) {
    const double sums[3] = {loss_sum, correct, rows};
    for (int k = 0; k < 3; ++k) {
      const double in = g.metrics_in ? g.metrics_in[k] : 0.0;
      g.metrics_out[k] = own_invalid ? in : in + sums[k];
    }
  }
}

}  // namespace synk::compute::softmax_math
