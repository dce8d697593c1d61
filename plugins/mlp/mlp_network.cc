#include "plugins/mlp/mlp_network.h"

#include <algorithm>

#include "plugins/compute/gemm.h"

namespace synk::mlp {

Network::Network(const Config& config, const sdk::Context& context)
    : config_(config), workspace_(context) {
  for (int l = 0; l < config_.layers(); ++l)
    ld_.push_back((config_.dims[l] + 1 + 3) / 4 * 4);
}

Network::Buffers Network::carve(compute::Carver& carver, int64_t rows) const {
  Buffers b;
  for (int l = 0; l < config_.layers(); ++l)
    b.a.push_back(carver.take<float>(rows * ld_[l]));
  b.d.push_back(nullptr);
  for (int l = 1; l <= config_.layers(); ++l)
    b.d.push_back(carver.take<float>(rows * config_.dims[l]));
  b.logits = carver.take<float>(rows * config_.classes());
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
  // The ones column of every hidden layer's input, once: GEMMs write only the features.
  for (int l = 1; l < config_.layers(); ++l)
    compute::setColumn(device_, buffers_.a[l], capacity, ld_[l], config_.dims[l], 1.0f);
}

void Network::forward(const float* params, const float* x, int64_t rows) {
  const int layers = config_.layers();
  compute::copyWithOnes(device_, x, rows, config_.inputs(), buffers_.a[0], ld_[0]);
  for (int l = 0; l < layers; ++l) {
    const bool last = l == layers - 1;
    compute::GemmArgs g;
    g.m = rows;
    g.n = config_.dims[l + 1];
    g.k = config_.dims[l] + 1;
    g.a = buffers_.a[l];
    g.lda = ld_[l];
    g.b = params + config_.offset(l);
    g.ldb = g.n;
    g.c = last ? buffers_.logits : buffers_.a[l + 1];
    g.ldc = last ? g.n : ld_[l + 1];
    g.precision = config_.precision;
    compute::gemm(device_, g);
    if (!last) compute::relu(device_, g.c, rows, g.n, g.ldc);
  }
}

void Network::loss(const int32_t* labels, int64_t rows, compute::CrossEntropyArgs out,
                   bool for_backward) {
  out.logits = buffers_.logits;
  out.rows = rows;
  out.classes = config_.classes();
  out.ld = config_.classes();
  out.labels = labels;
  out.dlogits = for_backward ? buffers_.d[config_.layers()] : nullptr;
  out.ld_d = config_.classes();
  compute::softmaxCrossEntropy(device_, out);
}

void Network::backward(const float* params, int64_t rows, float* grad,
                       const std::function<void(int)>& layer_done) {
  if (rows == 0) {  // an empty share still takes part in every bucket, with a zero gradient
    compute::fill(device_, grad, config_.parameters(), 0.0f);
    for (int l = config_.layers() - 1; l >= 0; --l)
      layer_done(l);
    return;
  }
  for (int l = config_.layers() - 1; l >= 0; --l) {
    const int64_t in = config_.dims[l], out = config_.dims[l + 1];
    // [dW; db] = [a | 1]^T d: the block's gradient, summed over the rows.
    compute::GemmArgs block;
    block.trans_a = compute::Transpose::Yes;
    block.m = in + 1;
    block.n = out;
    block.k = rows;
    block.a = buffers_.a[l];
    block.lda = ld_[l];
    block.b = buffers_.d[l + 1];
    block.ldb = out;
    block.c = grad + config_.offset(l);
    block.ldc = out;
    block.precision = config_.precision;
    compute::gemm(device_, block);
    if (l > 0) {
      // d[l] = d[l+1] W^T (W: the block without its bias row), masked by the ReLU.
      compute::GemmArgs delta;
      delta.trans_b = compute::Transpose::Yes;
      delta.m = rows;
      delta.n = in;
      delta.k = out;
      delta.a = buffers_.d[l + 1];
      delta.lda = out;
      delta.b = params + config_.offset(l);
      delta.ldb = out;
      delta.c = buffers_.d[l];
      delta.ldc = in;
      delta.precision = config_.precision;
      compute::gemm(device_, delta);
      compute::reluBackward(device_, buffers_.a[l], ld_[l], buffers_.d[l], in, rows, in);
    }
    layer_done(l);
  }
}

}  // namespace synk::mlp
