#pragma once
// The mlp's configuration, from its load options, and the layout of its flat parameter vector.
//
// Layer l maps d[l] features to d[l+1] (d = inputs, widths..., classes). Its weights W (d[l] x
// d[l+1], row-major: y = x W + b) start at offset(l) of `params` and its bias b (d[l+1]) follows
// them at biasOffset(l): the block reads as one (d[l] + 1) x d[l+1] matrix [W; b]. The GEMMs take
// W alone (K = d[l], aligned as the widths are) and the bias through an epilogue.
#include <cstdint>
#include <string>
#include <vector>

#include "synk/plugins/compute/device.h"
#include "synk/plugins/compute/update_rules.h"
#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::mlp {

// How GEMMs run on CUDA (the host has one GEMM): cublasGemmEx with the epilogues as kernels, or
// cuBLASLt with fused epilogues and heuristic #0 (deterministic) or autotuned algorithms.
enum class GemmPath { Cublas, Lt, LtTuned };

// What train_step moves between ranks (plugins/mlp/README.md, "Ranks and streams"): the gradient
// (an all-reduce of every parameter), or every rank's rows (each layer's input and output
// gradient, all-gathered, so each rank computes every block's gradient over the whole batch and
// updates inside the GEMM); auto takes rows where they are much smaller than the gradient.
enum class Exchange { Auto, Gradient, Rows };
// Auto takes rows where they move at most 1/kRowsRatio of the gradient's floats. Measured on
// 2 x H200 (the 4096-wide scaling MLP, ratios 14, 7.1, 3.6 at batch 64, 128, 256 per rank): rows
// 1.15 / 1.86 / 3.22 ms a step against the gradient's 1.91 / 2.32 / 3.24.
constexpr int64_t kRowsRatio = 4;

struct Config {
  std::vector<int64_t> dims;  // inputs, hidden widths..., classes
  compute::Precision precision = compute::Precision::Fp32;
  compute::Rule rule = compute::Rule::Sgd;
  compute::Hyper hyper;
  uint64_t seed = 0;
  // Gradient all-reduce buckets: a bucket closes once it holds this many bytes (whole layers);
  // 0: one, after the whole backward.
  int64_t bucket_bytes = int64_t{4} << 20;
  bool reduce_in_grad = true;  // grad() all-reduces (false: each rank's own mean gradient)
  bool cuda_graph = true;      // replay train_step as a captured CUDA graph (1 rank)
  GemmPath gemm = GemmPath::Lt;
  // SGD on one rank: train_step updates params inside the weight-gradient GEMMs (no gradient
  // vector, no update pass).
  bool fuse_update = true;
  Exchange exchange = Exchange::Auto;

  // Reads (and so declares) every option; refuses bad values naming the option.
  static Config fromOptions(const sdk::Options& options);

  int layers() const { return static_cast<int>(dims.size()) - 1; }
  int64_t inputs() const { return dims.front(); }
  int64_t classes() const { return dims.back(); }
  // Offset of layer l's [W; b] block in the flat vector; offset(layers()) is the parameter count.
  int64_t offset(int l) const;
  // Offset of layer l's bias (after its weights).
  int64_t biasOffset(int l) const { return offset(l) + dims[l] * dims[l + 1]; }
  int64_t parameters() const { return offset(layers()); }
  // Row r of W_0 where chunk c of `chunks` starts (c = chunks: the row count): backward writes
  // the first layer's block in these row ranges and the gradient's buckets end at them (one
  // function, so the two always agree).
  int64_t tailCut(int chunks, int c) const { return dims[0] * c / chunks; }
  // PyTorch's nn.Linear default: W and b uniform in +-1/sqrt(fan_in); element i of the flat
  // vector is value i of stream `seed` (compute/init.h), so any rank or device computes the same.
  void initialParameters(float* out) const;
};

}  // namespace synk::mlp
