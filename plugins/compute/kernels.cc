// Dispatch of kernels.h: the host loop or the CUDA kernel.
#include "synk/plugins/compute/kernels.h"

namespace synk::compute {

void fill(const Device& device, float* x, int64_t n, float value) {
  device.cuda ? cuda::fill(device.stream, x, n, value) : host::fill(x, n, value);
}

void scale(const Device& device, float* x, int64_t n, float alpha) {
  device.cuda ? cuda::scale(device.stream, x, n, alpha) : host::scale(x, n, alpha);
}

void axpy(const Device& device, int64_t n, float alpha, const float* x, float* y) {
  device.cuda ? cuda::axpy(device.stream, n, alpha, x, y) : host::axpy(n, alpha, x, y);
}

void divideBy(const Device& device, float* dst, const float* src, int64_t n, const float* divisor) {
  device.cuda ? cuda::divideBy(device.stream, dst, src, n, divisor)
              : host::divideBy(dst, src, n, divisor);
}

void restoreIfInvalid(const Device& device, const float* flag, const float* src, float* dst,
                      int64_t n) {
  device.cuda ? cuda::restoreIfInvalid(device.stream, flag, src, dst, n)
              : host::restoreIfInvalid(flag, src, dst, n);
}

void sum(const Device& device, const float* x, int64_t n, float* out, float* scratch) {
  device.cuda ? cuda::sum(device.stream, x, n, out, scratch) : host::sum(x, n, out);
}

void copyMatrix(const Device& device, const float* src, int64_t ld_src, float* dst, int64_t ld_dst,
                int64_t rows, int64_t cols) {
  if (src == dst && ld_src == ld_dst) return;
  device.cuda ? cuda::copyMatrix(device.stream, src, ld_src, dst, ld_dst, rows, cols)
              : host::copyMatrix(src, ld_src, dst, ld_dst, rows, cols);
}

void addBias(const Device& device, float* z, int64_t rows, int64_t cols, int64_t ld,
             const float* bias, bool relu) {
  device.cuda ? cuda::addBias(device.stream, z, rows, cols, ld, bias, relu)
              : host::addBias(z, rows, cols, ld, bias, relu);
}

void columnSum(const Device& device, const float* x, int64_t rows, int64_t cols, int64_t ld,
               float alpha, const float* y_in, float* y_out) {
  device.cuda ? cuda::columnSum(device.stream, x, rows, cols, ld, alpha, y_in, y_out)
              : host::columnSum(x, rows, cols, ld, alpha, y_in, y_out);
}

void relu(const Device& device, float* z, int64_t rows, int64_t cols, int64_t ld) {
  device.cuda ? cuda::relu(device.stream, z, rows, cols, ld) : host::relu(z, rows, cols, ld);
}

void reluBackward(const Device& device, const float* a, int64_t lda, float* d, int64_t ldd,
                  int64_t rows, int64_t cols) {
  device.cuda ? cuda::reluBackward(device.stream, a, lda, d, ldd, rows, cols)
              : host::reluBackward(a, lda, d, ldd, rows, cols);
}

void softmaxCrossEntropy(const Device& device, const CrossEntropyArgs& args) {
  if (args.classes <= 0) {
    throw sdk::Error(sdk::Status::InvalidArgument, "softmax cross-entropy needs classes > 0");
  }
  device.cuda ? cuda::softmaxCrossEntropy(device.stream, args) : host::softmaxCrossEntropy(args);
}

}  // namespace synk::compute
