#pragma once
// The mlp's forward and backward passes on a compute::Device, with their buffers in one
// workspace from the host allocator. Every GEMM takes a layer's W alone (K = its input width) and
// the bias through an epilogue (compute/gemm.h), which cuBLASLt fuses: forward, one GEMM per
// layer (bias and ReLU in its epilogue) and one fused softmax cross-entropy; backward, per layer
// from the last, the block's gradient (dW = a^T d with db in the epilogue) and, below the first
// layer, d_prev = d W^T and the ReLU mask (a kernel reading the activation).
//
// backwardSgd folds SGD into the backward pass: W <- W - (lr / rows) a^T d is one GEMM with
// beta = 1 reading the old block (out of place when the runtime rotates the parameter buffers)
// and b <- b - (lr / rows) sum(d) one column-sum kernel; d_prev for layer l is computed before
// layer l's block is written, so it reads the old W even in place.
#include <cstdint>
#include <functional>
#include <vector>

#include "synk/plugins/compute/device.h"
#include "synk/plugins/compute/gemm.h"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/mlp/mlp_config.h"

namespace synk::mlp {

class Network {
 public:
  Network(const Config& config, const sdk::Context& context);

  // The device the passes run on: set once, before reserve (the model picks its stream).
  void setDevice(const compute::Device& device) { device_ = device; }
  // Room for batches of `rows` (grows, never shrinks). A grow moves every buffer: generation()
  // changes, and graphs captured over the old buffers must go.
  void reserve(int64_t rows);
  uint64_t generation() const { return workspace_.generation(); }

  // Logits of x (rows x inputs, dense; read again by backward) under `params`; keeps the
  // activations for backward. `layer_out(l)`, if given, runs once layer l's output is written
  // (activation(l + 1); the logits for the last layer).
  void forward(const float* params, const float* x, int64_t rows,
               const std::function<void(int)>& layer_out = nullptr);
  // Cross-entropy of the logits against labels: `out` names the device scalars to write; with
  // `for_backward` the gradient of the summed loss goes to the last layer's delta.
  void loss(const int32_t* labels, int64_t rows, compute::CrossEntropyArgs out, bool for_backward);
  // The gradient of the summed loss into grad[0, parameters()), layer by layer from the last,
  // the first layer's block in `tail_chunks` GEMMs (row ranges of W from the last, mlp_reducer.h);
  // `written(from)` runs each time grad[from, parameters()) is complete.
  void backward(const float* params, int64_t rows, float* grad, int tail_chunks,
                const std::function<void(int64_t)>& written);
  // params_out = params - (lr / rows) * the gradient of the summed loss (rows > 0), without
  // writing the gradient anywhere. params_out may equal params.
  void backwardSgd(const float* params, float* params_out, int64_t rows, float lr);
  // One rank's share of an SGD step that an all-reduce (sum) of params_out over the ranks
  // completes: params_out = (keep_params ? params : 0) + step * the gradient of this rank's
  // summed loss (step = -lr / the whole batch's rows; rows may be 0), blocks written as
  // backward() writes them (tail_chunks, `written`). With one rank keeping params, the sum is
  // params - lr * the batch's mean gradient and no update pass runs. params_out != params.
  void backwardSgdShare(const float* params, float* params_out, int64_t rows, float step,
                        bool keep_params, int tail_chunks,
                        const std::function<void(int64_t)>& written);

  // parameters() + 1 floats: the flat gradient and, after it, the row count it sums over.
  float* gradient() const { return gradient_; }

  // The buffers of the last reserve, for a caller that moves rows between ranks
  // (mlp_rows.h): layer l's input a[l] (1 <= l < layers) and output gradient d[l]
  // (1 <= l <= layers; d[layers] is dlogits), each `capacity` rows of ld(l) floats.
  float* activation(int l) const { return buffers_.a[l]; }
  float* delta(int l) const { return buffers_.d[l]; }
  int64_t ld(int l) const { return ld_[l]; }
  // d[l] = (d[l+1] W_l^T) masked by ReLU'(a[l]), for l >= 1.
  void deltaBelow(const float* params, int l, int64_t rows);
  // a^T d over `rows` rows for layer l from the given rows (a: rows x dims[l], lda; d: rows x
  // dims[l+1], ldd): the block gradient's GEMM, C and the epilogue left to the caller.
  compute::GemmArgs blockGradientOf(int l, const float* a, int64_t lda, const float* d, int64_t ldd,
                                    int64_t rows) const;

 private:
  struct Buffers {
    std::vector<float*> a;  // a[l]: rows x ld_[l], 1 <= l < layers (layer l's input; a[0] is x)
    std::vector<float*> d;  // d[l]: rows x ld_[l], 1 <= l <= layers (d[layers]: dlogits)
    float* logits = nullptr;
    float* gradient = nullptr;
  };
  Buffers carve(compute::Carver& carver, int64_t rows) const;
  // Where backwardBlocks writes: out = alpha * (the gradient of the summed loss) + beta * in,
  // block by block (out and in laid out like params; in is null where beta is 0).
  struct BlockSink {
    float* out = nullptr;
    const float* in = nullptr;
    float alpha = 1;
    float beta = 0;
    // The bias in the GEMM's epilogue (BiasGrad writes the plain column sums, neither scaled
    // nor added to in: the gradient alone), else a column-sum kernel after the GEMM.
    bool bias_in_epilogue = false;
  };
  // backward()'s and backwardSgdShare()'s pass over rows > 0: per layer from the last, its block
  // (the first layer's in `tail_chunks` GEMMs, as backward() says) into `sink`, `written` after
  // each, then the delta below.
  void backwardBlocks(const float* params, int64_t rows, const BlockSink& sink, int tail_chunks,
                      const std::function<void(int64_t)>& written);
  // Layer l's input and its leading dimension.
  const float* input(int l) const { return l == 0 ? x_ : buffers_.a[l]; }
  int64_t inputLd(int l) const { return l == 0 ? config_.inputs() : ld_[l]; }
  // a[l]^T d[l+1], layer l's weight gradient (c and the epilogue left to the caller).
  compute::GemmArgs blockGradient(int l, int64_t rows) const {
    return blockGradientOf(l, input(l), inputLd(l), buffers_.d[l + 1], ld_[l + 1], rows);
  }

  const Config& config_;
  compute::Device device_;
  compute::Workspace workspace_;
  std::vector<int64_t> ld_;  // of a[l] and d[l]: dims[l] rounded up to 4 floats (16 bytes)
  int64_t capacity_ = -1;
  Buffers buffers_;
  float* gradient_ = nullptr;
  const float* x_ = nullptr;  // forward's input, for backward
};

}  // namespace synk::mlp
