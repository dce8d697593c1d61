#pragma once
// gemm() through cuBLASLt: a compute::Device whose `lt` points at an LtMatmul runs every GEMM
// (k > 0) here. Over cublasGemmEx it brings
//   * fused epilogues: bias, bias + ReLU, the bias gradient (gemm.h's Epilogue), so a layer's
//     forward or weight gradient is one kernel;
//   * C apart from D (c_in), so parameters can be updated out of place inside the GEMM;
//   * the choice of algorithm: cuBLASLt's heuristic ranks candidates for the exact problem
//     (shape, transposes, leading dimensions, pointer alignment, epilogue, precision); `tune`
//     times the top ones once on the device and keeps the fastest.
// A plan (descriptors, layouts, the algorithm) is made on a problem's first use and reused. With
// `tune` the candidates run on scratch outputs (the call's own inputs, read only), timed with CUDA
// events on the call's stream, when that stream is not being captured into a CUDA graph (then
// heuristic #0 is kept). Heuristic #0 depends only on the problem, so untuned runs are
// reproducible; tuned ones are within a process (the choice is cached), not always across runs.
// An epilogue that no algorithm fuses falls back to a kernel after the GEMM (a fallback, counted).
// Built from cuda/gemm_lt.cc with CUDA, cuda/cuda_unavailable.cc without (the constructor then
// throws Unsupported). Create it in the model's constructor (after fork).
#include <cstdint>
#include <memory>

#include "synk/plugins/compute/gemm.h"
#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::compute::cuda {

class LtMatmul {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // split-K needs room on Hopper
  static constexpr int kCandidates = 8;                        // timed when tuning

  LtMatmul(const sdk::Context& context, bool tune);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // gemm()'s work once its arguments are checked (k > 0), enqueued on `stream`.
  void run(void* stream, const GemmArgs& args);

  struct Stats {
    uint64_t plans = 0;      // problems seen
    uint64_t tuned = 0;      // of those, chosen by timing candidates
    uint64_t fallbacks = 0;  // of those, an epilogue run as a kernel after the GEMM
    uint64_t runs = 0;       // GEMMs enqueued
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace synk::compute::cuda
