#pragma once
// train_step's rows exchange on several ranks (Config::exchange = rows): instead of all-reducing
// the gradient (every parameter), each rank all-gathers every layer's input rows a[l] and output
// gradient rows d[l+1] from every rank, padded with zero rows to the largest share, and computes
// each block's gradient over the whole batch itself. Every rank runs the same GEMMs on the same
// rows, so the parameters stay bitwise identical, and SGD folds into the GEMM (W' = W - (lr /
// rows) a^T d with beta = 1) as on one rank: no gradient vector, no update pass. Worth it where
// the rows are few next to the widths: at batch 64 per rank of the 4096-wide scaling MLP, 2 ranks
// gather 4.7 M floats a step against a 67 M-float gradient; the price is each rank computing the
// weight gradients of every rank's rows (cheap while a GEMM of those rows is latency-bound).
//
// CUDA, three streams, each waiting for events of the work it reads: forward, the loss and the
// deltas (d[l] = d[l+1] W^T, masked) on the model's compute stream; the gathers on the rank's
// stream (where the host enqueues NCCL); the block GEMMs (and other rules' updates) on a block
// stream. So gathers overlap forward and the deltas, and a block's GEMM overlaps the next delta
// and gather. Host: in order.
// Zero rows change no sum (0 * a = 0, x + 0 = x), so padding is exact. The labels are gathered
// too: a bad label on any rank (a NaN loss there on CUDA) zeroes every rank's deltas, so every
// rank skips the step alike, as with the gradient's all-reduce.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "synk/plugins/compute/cuda_resources.h"
#include "synk/plugins/compute/device.h"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/mlp/mlp_config.h"
#include "synk/plugins/mlp/mlp_network.h"

namespace synk::mlp {

struct RowShares {
  int ranks = 1;
  int rank = 0;
  int64_t mine = 0;   // this rank's rows
  int64_t most = 0;   // the largest share: every gather's rows per rank
  int64_t total = 0;  // the batch: the divisor of the summed gradient
};
// From a call's rank_rows (sdk::Call::rankRows, non-empty).
RowShares rowSharesOf(const std::vector<int64_t>& rank_rows, int rank);

// Floats one step gathers on a rank: ranks x most x (every layer's input and output width).
int64_t gatheredFloats(const Config& config, const RowShares& shares);
// exchange = auto takes rows on CUDA where the gathered floats are at most 1/kRowsRatio
// (mlp_config.h) of the gradient's; on cpu ranks the extra weight-gradient GEMMs cost more than
// shared memory saves.
bool rowsPay(const Config& config, const RowShares& shares);

class RowExchange {
 public:
  // `compute`: forward and deltas; `rank`: the rank's stream (padding, gathers); `block`: the
  // block GEMMs and updates, with a GEMM handle and workspace of its own. The same host device
  // thrice on cpu ranks.
  RowExchange(const Config& config, const sdk::Context& context, Network& network,
              const compute::Device& compute, const compute::Device& rank,
              const compute::Device& block);

  // Room for these shares (grows); generation() changes when buffers move.
  void reserve(const RowShares& shares);
  uint64_t generation() const { return workspace_.generation(); }

  struct Step {
    const float* params = nullptr;
    const float* x = nullptr;  // this rank's rows (shares.mine)
    const int32_t* y = nullptr;
    compute::CrossEntropyArgs out;  // loss outputs and metrics (this rank's rows)
    bool bad_rows = false;          // host: bad labels here; this rank sends zero rows (and
                                    // its labels, so the others skip the step too)
    // SGD inside the GEMMs: params_out = params - (lr / total) * the summed gradient.
    float* params_out = nullptr;
    float lr = 0;
    // Otherwise (params_out null): the summed gradient into grad (the count slot after it gets
    // total); `updated(begin, end, device)` enqueues the update of each block on `device` once
    // it is written (may be empty: the caller updates after run, on the rank's stream).
    float* grad = nullptr;
    std::function<void(int64_t, int64_t, const compute::Device&)> updated;
  };
  void run(const Step& step, const RowShares& shares);

 private:
  void gather(const float* send, float* recv, int64_t count) const;
  // `from`'s work so far comes before `to`'s next (CUDA; else nothing).
  void handOff(compute::cuda::Event* event, const compute::Device& from,
               const compute::Device& to) const;
  void blockOverBatch(const Step& step, const RowShares& shares, int l) const;
  int64_t inputLd(int l) const { return l == 0 ? config_.inputs() : network_.ld(l); }

  const Config& config_;
  sdk::Context context_;
  Network& network_;
  compute::Device compute_;
  compute::Device rank_;
  compute::Device block_;
  bool streams_;  // CUDA: three streams to order
  compute::Workspace workspace_;
  int64_t capacity_ = -1;          // ranks x most rows
  std::vector<float*> all_a_;      // all_a_[l]: every rank's a[l] (a[0] = x), l < layers
  std::vector<float*> all_d_;      // all_d_[l]: every rank's d[l], 1 <= l <= layers
  float* x_padded_ = nullptr;      // this rank's x with zero rows up to most
  int32_t* y_padded_ = nullptr;    // its labels, padded with label 0
  int32_t* all_labels_ = nullptr;  // every rank's (padded) labels
  std::unique_ptr<compute::cuda::Event> start_, labels_ready_, compute_done_, block_done_;
  // a[l] written (compute), d[l] written (compute), every rank's d[l] gathered (rank stream).
  std::vector<std::unique_ptr<compute::cuda::Event>> a_ready_, d_ready_, d_gathered_;
};

}  // namespace synk::mlp
