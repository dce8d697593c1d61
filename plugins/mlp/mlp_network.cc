#include "synk/plugins/mlp/mlp_network.h"

#include <algorithm>

#include "synk/plugins/compute/gemm.h"

namespace synk::mlp {

Network::Network(const Config& config, const sdk::Context& context)
    : config_(config), workspace_(context) {
  for (int64_t width : config_.dims)
    ld_.push_back((width + 3) / 4 * 4);
}

Network::Buffers Network::carve(compute::Carver& carver, int64_t rows) const {
  Buffers b;
  b.a.push_back(nullptr);
  for (int l = 1; l < config_.layers(); ++l)
    b.a.push_back(carver.take<float>(rows * ld_[l]));
  b.d.push_back(nullptr);
  for (int l = 1; l <= config_.layers(); ++l)
    b.d.push_back(carver.take<float>(rows * ld_[l]));
  b.logits = carver.take<float>(rows * ld_[config_.layers()]);
  b.gradient = carver.take<float>(config_.parameters() + 1);
  return b;
}

void Network::reserve(int64_t rows) {
  if (rows <= capacity_) return;
  const int64_t capacity = std::max<int64_t>(rows, 1);
  compute::Carver sizing;
  carve(sizing, capacity);
  compute::Carver carver(workspace_.reserve(sizing.used()));
  buffers_ = carve(carver, capacity);
  gradient_ = buffers_.gradient;
  capacity_ = capacity;
}

void Network::forward(const float* params, const float* x, int64_t rows,
                      const std::function<void(int)>& layer_out) {
  const int layers = config_.layers();
  x_ = x;
  for (int l = 0; l < layers; ++l) {
    const bool last = l == layers - 1;
    compute::GemmArgs g;
    g.m = rows;
    g.n = config_.dims[l + 1];
    g.k = config_.dims[l];
    g.a = input(l);
    g.lda = inputLd(l);
    g.b = params + config_.offset(l);
    g.ldb = g.n;
    g.c = last ? buffers_.logits : buffers_.a[l + 1];
    g.ldc = ld_[l + 1];
    g.epilogue = last ? compute::Epilogue::Bias : compute::Epilogue::ReluBias;
    g.bias = params + config_.biasOffset(l);
    g.precision = config_.precision;
    compute::gemm(device_, g);
    if (layer_out) layer_out(l);
  }
}

void Network::loss(const int32_t* labels, int64_t rows, compute::CrossEntropyArgs out,
                   bool for_backward) {
  const int layers = config_.layers();
  out.logits = buffers_.logits;
  out.rows = rows;
  out.classes = config_.classes();
  out.ld = ld_[layers];
  out.labels = labels;
  out.dlogits = for_backward ? buffers_.d[layers] : nullptr;
  out.ld_d = ld_[layers];
  compute::softmaxCrossEntropy(device_, out);
}

compute::GemmArgs Network::blockGradientOf(int l, const float* a, int64_t lda, const float* d,
                                           int64_t ldd, int64_t rows) const {
  compute::GemmArgs g;
  g.trans_a = compute::Transpose::Yes;
  g.m = config_.dims[l];
  g.n = config_.dims[l + 1];
  g.k = rows;
  g.a = a;
  g.lda = lda;
  g.b = d;
  g.ldb = ldd;
  g.ldc = g.n;
  g.precision = config_.precision;
  return g;
}

void Network::deltaBelow(const float* params, int l, int64_t rows) {
  const int64_t in = config_.dims[l], out = config_.dims[l + 1];
  compute::GemmArgs delta;
  delta.trans_b = compute::Transpose::Yes;
  delta.m = rows;
  delta.n = in;
  delta.k = out;
  delta.a = buffers_.d[l + 1];
  delta.lda = ld_[l + 1];
  delta.b = params + config_.offset(l);
  delta.ldb = out;
  delta.c = buffers_.d[l];
  delta.ldc = ld_[l];
  delta.precision = config_.precision;
  compute::gemm(device_, delta);
  compute::reluBackward(device_, buffers_.a[l], ld_[l], buffers_.d[l], ld_[l], rows, in);
}

void Network::backwardBlocks(const float* params, int64_t rows, const BlockSink& sink,
                             int tail_chunks, const std::function<void(int64_t)>& written) {
  for (int l = config_.layers() - 1; l >= 0; --l) {
    // The block first, so its all-reduce starts before the delta below is computed (the delta
    // reads W_l from params, which neither caller writes). dW = a^T d over the rows: one GEMM (the
    // first layer: one per row range of W, the bias with the last rows, whose bucket holds it).
    const int chunks = l == 0 ? tail_chunks : 1;
    const int64_t width = config_.dims[l + 1];
    for (int c = chunks - 1; c >= 0; --c) {
      const int64_t first = l == 0 ? config_.tailCut(chunks, c) : 0;
      const int64_t last = l == 0 ? config_.tailCut(chunks, c + 1) : config_.dims[l];
      const int64_t at = config_.offset(l) + first * width;
      const bool with_bias = c == chunks - 1;
      compute::GemmArgs block = blockGradient(l, rows);
      block.m = last - first;
      block.a += first;  // columns [first, last) of the layer's input
      block.alpha = sink.alpha;
      block.beta = sink.beta;
      block.c_in = sink.in ? sink.in + at : nullptr;
      block.c = sink.out + at;
      if (with_bias && sink.bias_in_epilogue) {
        block.epilogue = compute::Epilogue::BiasGrad;
        block.bias_grad = sink.out + config_.biasOffset(l);
      }
      compute::gemm(device_, block);
      if (with_bias && !sink.bias_in_epilogue) {
        compute::columnSum(device_, block.b, rows, width, block.ldb, sink.alpha,
                           sink.in ? sink.in + config_.biasOffset(l) : nullptr,
                           sink.out + config_.biasOffset(l));
      }
      written(at);
    }
    if (l > 0) deltaBelow(params, l, rows);
  }
}

void Network::backward(const float* params, int64_t rows, float* grad, int tail_chunks,
                       const std::function<void(int64_t)>& written) {
  if (rows == 0) {  // an empty share still takes part in every bucket, with a zero gradient
    compute::fill(device_, grad, config_.parameters(), 0.0f);
    written(0);
    return;
  }
  BlockSink sink;  // the gradient itself: alpha 1, beta 0, db in the epilogue
  sink.out = grad;
  sink.bias_in_epilogue = true;
  backwardBlocks(params, rows, sink, tail_chunks, written);
}

void Network::backwardSgdShare(const float* params, float* params_out, int64_t rows, float step,
                               bool keep_params, int tail_chunks,
                               const std::function<void(int64_t)>& written) {
  const int64_t n = config_.parameters();
  if (rows == 0) {  // an empty share: the parameters (or nothing) to the sum, bucket by bucket
    if (keep_params) {
      compute::copyMatrix(device_, params, n, params_out, n, 1, n);
    } else {
      compute::fill(device_, params_out, n, 0.0f);
    }
    written(0);
    return;
  }
  BlockSink sink;  // step * the gradient (+ params): the bias by a kernel, which scales and adds
  sink.out = params_out;
  sink.in = keep_params ? params : nullptr;
  sink.alpha = step;
  sink.beta = keep_params ? 1.0f : 0.0f;
  backwardBlocks(params, rows, sink, tail_chunks, written);
}

void Network::backwardSgd(const float* params, float* params_out, int64_t rows, float lr) {
  const float step = -lr / static_cast<float>(rows);
  for (int l = config_.layers() - 1; l >= 0; --l) {
    if (l > 0) deltaBelow(params, l, rows);  // reads W_l before it changes
    compute::GemmArgs block = blockGradient(l, rows);
    block.alpha = step;
    block.beta = 1;
    block.c_in = params + config_.offset(l);
    block.c = params_out + config_.offset(l);
    compute::gemm(device_, block);
    compute::columnSum(device_, block.b, rows, block.n, block.ldb, step,
                       params + config_.biasOffset(l), params_out + config_.biasOffset(l));
  }
}

}  // namespace synk::mlp
