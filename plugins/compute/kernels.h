#pragma once
// Element-wise ops, reductions and the fused kernels a classifier needs, on a Device: a host loop
// or one CUDA kernel each. Pointers are the device's memory; "device scalar" arguments are one
// element in that memory (so a captured CUDA graph reads the value current at replay). Row-major
// matrices take a leading dimension.
#include <cstdint>

#include "synk/plugins/compute/device.h"

namespace synk::compute {

void fill(const Device& device, float* x, int64_t n, float value);
// x *= alpha
void scale(const Device& device, float* x, int64_t n, float alpha);
// y += alpha * x
void axpy(const Device& device, int64_t n, float alpha, const float* x, float* y);
// dst = src / *divisor (a device scalar); dst may equal src.
void divideBy(const Device& device, float* dst, const float* src, int64_t n, const float* divisor);
// dst = src where the device scalar *flag is not >= 0 (a count of -infinity: a bad label on some
// rank), else dst as it is: a step that an invalid batch must leave undone, undone on the device.
void restoreIfInvalid(const Device& device, const float* flag, const float* src, float* dst,
                      int64_t n);

// *out (device scalar) = the sum of x, in a fixed order (deterministic). `scratch` holds
// kSumScratch floats of the device's memory.
constexpr int64_t kSumScratch = 256;
void sum(const Device& device, const float* x, int64_t n, float* out, float* scratch);

// dst[i, j] = src[i, j] on rows x cols (each with its leading dimension).
void copyMatrix(const Device& device, const float* src, int64_t ld_src, float* dst, int64_t ld_dst,
                int64_t rows, int64_t cols);
// z[i, j] += bias[j] in place on rows x cols, then with `relu` z = max(z, 0): a layer's bias and
// activation in one pass.
void addBias(const Device& device, float* z, int64_t rows, int64_t cols, int64_t ld,
             const float* bias, bool relu);
// y_out[j] = y_in[j] + alpha * (the sum over rows of x[:, j]), y_in null meaning 0; y_out may
// equal y_in. Each column is summed in a fixed order, in double (deterministic): a bias gradient
// (alpha 1, no y_in), or an SGD step of a bias straight from its layer's output gradient.
void columnSum(const Device& device, const float* x, int64_t rows, int64_t cols, int64_t ld,
               float alpha, const float* y_in, float* y_out);
// z = max(z, 0) in place on rows x cols.
void relu(const Device& device, float* z, int64_t rows, int64_t cols, int64_t ld);
// d = d where a > 0, else 0 (d: the gradient of relu's output, becomes that of its input).
void reluBackward(const Device& device, const float* a, int64_t lda, float* d, int64_t ldd,
                  int64_t rows, int64_t cols);

// Softmax cross-entropy over rows of logits with integer labels, in one pass.
struct CrossEntropyArgs {
  const float* logits = nullptr;
  int64_t rows = 0;
  int64_t classes = 0;
  int64_t ld = 0;
  const int32_t* labels = nullptr;
  // Optional outputs (null: not computed).
  float* dlogits = nullptr;  // rows x classes (ld_d): softmax - one_hot, the gradient of the
  int64_t ld_d = 0;          // summed loss
  // Device scalars: the mean loss and the fraction of rows whose argmax is the label; 0 when
  // rows == 0, so that a row-weighted average over ranks ignores an empty share.
  float* mean_loss = nullptr;
  float* accuracy = nullptr;
  float* rows_out = nullptr;           // device scalar: rows, as float (a gradient's divisor)
  const double* metrics_in = nullptr;  // [loss sum, correct, rows] so far ...
  double* metrics_out = nullptr;       // ... and plus this call's (may equal metrics_in)
  // CUDA, a bad label: every row's dlogits is 0 instead of the bad rows' NaN, for a step that
  // applies the gradient without dividing by rows_out (it then changes nothing).
  bool invalid_zeroes_dlogits = false;
  // Where every rank sees the whole batch's labels (the mlp's rows exchange): all_rows labels
  // (padding rows included, with a valid label) and the batch's true row count. A bad label among
  // them acts as one of this rank's on dlogits (zeroed as asked) and rows_out (-infinity, else
  // batch_rows), so that every rank skips the same step; the loss and metrics stay this rank's.
  const int32_t* all_labels = nullptr;
  int64_t all_rows = 0;
  int64_t batch_rows = 0;
};
// A label outside [0, classes) is an InvalidArgument naming the row on the host. On CUDA (a
// kernel cannot throw) the loss is NaN, rows_out is -infinity (an update dividing by it is an
// identity: compute/update_rules.h), dlogits NaN on the bad rows (or 0 on every row, as asked)
// and the metrics stay as they were.
void softmaxCrossEntropy(const Device& device, const CrossEntropyArgs& args);

namespace host {
void fill(float* x, int64_t n, float value);
void scale(float* x, int64_t n, float alpha);
void axpy(int64_t n, float alpha, const float* x, float* y);
void divideBy(float* dst, const float* src, int64_t n, const float* divisor);
void restoreIfInvalid(const float* flag, const float* src, float* dst, int64_t n);
void sum(const float* x, int64_t n, float* out);
void copyMatrix(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows,
                int64_t cols);
void addBias(float* z, int64_t rows, int64_t cols, int64_t ld, const float* bias, bool relu);
void columnSum(const float* x, int64_t rows, int64_t cols, int64_t ld, float alpha,
               const float* y_in, float* y_out);
void relu(float* z, int64_t rows, int64_t cols, int64_t ld);
void reluBackward(const float* a, int64_t lda, float* d, int64_t ldd, int64_t rows, int64_t cols);
void softmaxCrossEntropy(const CrossEntropyArgs& args);
}  // namespace host

namespace cuda {
void fill(void* stream, float* x, int64_t n, float value);
void scale(void* stream, float* x, int64_t n, float alpha);
void axpy(void* stream, int64_t n, float alpha, const float* x, float* y);
void divideBy(void* stream, float* dst, const float* src, int64_t n, const float* divisor);
void restoreIfInvalid(void* stream, const float* flag, const float* src, float* dst, int64_t n);
void sum(void* stream, const float* x, int64_t n, float* out, float* scratch);
void copyMatrix(void* stream, const float* src, int64_t ld_src, float* dst, int64_t ld_dst,
                int64_t rows, int64_t cols);
void addBias(void* stream, float* z, int64_t rows, int64_t cols, int64_t ld, const float* bias,
             bool relu);
void columnSum(void* stream, const float* x, int64_t rows, int64_t cols, int64_t ld, float alpha,
               const float* y_in, float* y_out);
void relu(void* stream, float* z, int64_t rows, int64_t cols, int64_t ld);
void reluBackward(void* stream, const float* a, int64_t lda, float* d, int64_t ldd, int64_t rows,
                  int64_t cols);
void softmaxCrossEntropy(void* stream, const CrossEntropyArgs& args);
}  // namespace cuda

}  // namespace synk::compute
