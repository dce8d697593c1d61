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
// CUDA: forward, the loss and the deltas (d[l] = d[l+1] W^T, masked) run on the model's compute
// stream; the gathers and the block GEMMs on the rank's stream, each after an event of the work it
// reads, so gathers overlap the forward and the deltas of later layers. Host: in order.
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
// exchange = auto takes rows on CUDA where the gathered floats are at most 1/kRowsRatio of the
// gradient's; on cpu ranks the extra weight-gradient GEMMs cost more than shared memory saves.
constexpr int64_t kRowsRatio = 8;
bool rowsPay(const Config& config, const RowShares& shares);

class RowExchange {
 public:
  // `compute`: forward and deltas; `rank`: the rank's stream (gathers, block GEMMs, updates),
  // with a GEMM workspace of its own. The same host device on cpu ranks.
  RowExchange(const Config& config, const sdk::Context& context, Network& network,
              const compute::Device& compute, const compute::Device& rank);

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
    // total); `updated(begin, end)` runs on the rank's stream as each block is written.
    float* grad = nullptr;
    std::function<void(int64_t, int64_t)> updated;
  };
  void run(const Step& step, const RowShares& shares);

 private:
  void gather(const float* send, float* recv, int64_t count) const;
  // The compute stream's work so far comes before the rank stream's next (CUDA; else nothing).
  void handOff(compute::cuda::Event* event) const;
  void blockOverBatch(const Step& step, const RowShares& shares, int l) const;
  int64_t inputLd(int l) const { return l == 0 ? config_.inputs() : network_.ld(l); }

  const Config& config_;
  sdk::Context context_;
  Network& network_;
  compute::Device compute_;
  compute::Device rank_;
  bool two_streams_;
  compute::Workspace workspace_;
  int64_t capacity_ = -1;  // ranks x most rows
  std::vector<float*> all_a_;  // all_a_[l]: every rank's a[l] (a[0] = x), l < layers
  std::vector<float*> all_d_;  // all_d_[l]: every rank's d[l], 1 <= l <= layers
  float* x_padded_ = nullptr;  // this rank's x with zero rows up to most
  int32_t* y_padded_ = nullptr;   // its labels, padded with label 0
  int32_t* all_labels_ = nullptr;  // every rank's (padded) labels
  std::unique_ptr<compute::cuda::Event> start_, labels_ready_, done_;
  std::vector<std::unique_ptr<compute::cuda::Event>> a_ready_, d_ready_;
};

}  // namespace synk::mlp
