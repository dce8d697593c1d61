#pragma once
// The mlp's forward and backward passes on a compute::Device, with their buffers in one
// workspace from the host allocator. Layer l's input a[l] keeps a column of ones after its d[l]
// features (ld rounded up to 4 floats), so one GEMM against the layer's [W; b] block computes
// x W + b, and one GEMM a[l]^T d[l+1] the gradient of the whole block. Per step: layers GEMMs and
// layers - 1 ReLUs forward, one fused softmax cross-entropy, 2 * layers - 1 GEMMs and layers - 1
// ReLU masks backward.
#include <cstdint>
#include <functional>
#include <vector>

#include "plugins/compute/device.h"
#include "plugins/compute/kernels.h"
#include "plugins/mlp/mlp_config.h"

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

  // Logits of x (rows x inputs, dense) under `params`; keeps the activations for backward.
  void forward(const float* params, const float* x, int64_t rows);
  // Cross-entropy of the logits against labels: `out` names the device scalars to write; with
  // `for_backward` the gradient of the summed loss goes to the last layer's delta.
  void loss(const int32_t* labels, int64_t rows, compute::CrossEntropyArgs out, bool for_backward);
  // The gradient of the summed loss into grad[0, parameters()), layer by layer from the last;
  // `layer_done(l)` runs once layer l's block is written.
  void backward(const float* params, int64_t rows, float* grad,
                const std::function<void(int)>& layer_done);

  // parameters() + 1 floats: the flat gradient and, after it, the row count it sums over.
  float* gradient() const { return gradient_; }
  const compute::Device& device() const { return device_; }

 private:
  struct Buffers {
    std::vector<float*> a;  // a[l]: rows x ld[l], l < layers (input of layer l, ones column)
    std::vector<float*> d;  // d[l]: rows x dims[l], 1 <= l <= layers (d[layers]: dlogits)
    float* logits = nullptr;
    float* gradient = nullptr;
  };
  Buffers carve(compute::Carver& carver, int64_t rows) const;

  const Config& config_;
  compute::Device device_;
  compute::Workspace workspace_;
  std::vector<int64_t> ld_;  // of a[l]
  int64_t capacity_ = -1;
  Buffers buffers_;
  float* gradient_ = nullptr;
};

}  // namespace synk::mlp
