#include "synk/plugins/mlp/mlp_rows.h"

#include <algorithm>
#include <limits>

#include "synk/plugins/compute/gemm.h"

namespace synk::mlp {

RowShares rowSharesOf(const std::vector<int64_t>& rank_rows, int rank) {
  RowShares s;
  s.ranks = static_cast<int>(rank_rows.size());
  s.rank = rank;
  s.mine = rank_rows.at(static_cast<size_t>(rank));
  for (int64_t rows : rank_rows) {
    s.most = std::max(s.most, rows);
    s.total += rows;
  }
  return s;
}

int64_t gatheredFloats(const Config& config, const RowShares& shares) {
  int64_t widths = 0;
  for (int l = 0; l < config.layers(); ++l)
    widths += config.dims[l] + config.dims[l + 1];
  return shares.ranks * shares.most * widths;
}

bool rowsPay(const Config& config, const RowShares& shares) {
  return gatheredFloats(config, shares) * kRowsRatio <= config.parameters();
}

RowExchange::RowExchange(const Config& config, const sdk::Context& context, Network& network,
                         const compute::Device& compute, const compute::Device& rank,
                         const compute::Device& block)
    : config_(config),
      context_(context),
      network_(network),
      compute_(compute),
      rank_(rank),
      block_(block),
      streams_(compute.cuda),
      workspace_(context) {
  const size_t slots = static_cast<size_t>(config_.layers()) + 1;
  a_ready_.resize(slots);  // null on the host: no hand-off
  d_ready_.resize(slots);
  d_gathered_.resize(slots);
  if (!streams_) return;
  if (compute.stream == rank.stream || block.stream == rank.stream ||
      block.stream == compute.stream) {
    throw sdk::Error(sdk::Status::InvalidArgument,
                     "the rows exchange needs three distinct streams on CUDA");
  }
  auto make = [] { return std::make_unique<compute::cuda::Event>(); };
  start_ = make();
  labels_ready_ = make();
  compute_done_ = make();
  block_done_ = make();
  for (size_t l = 0; l < slots; ++l) {
    a_ready_[l] = make();
    d_ready_[l] = make();
    d_gathered_[l] = make();
  }
}

void RowExchange::reserve(const RowShares& shares) {
  network_.reserve(shares.most);  // this rank's buffers hold its padded share
  const int64_t rows = std::max<int64_t>(int64_t{shares.ranks} * shares.most, 1);
  if (rows <= capacity_) return;
  const int layers = config_.layers();
  auto carve = [&](compute::Carver& carver) {
    all_a_.assign(static_cast<size_t>(layers), nullptr);
    all_d_.assign(static_cast<size_t>(layers) + 1, nullptr);
    for (int l = 0; l < layers; ++l)
      all_a_[l] = carver.take<float>(rows * inputLd(l));
    for (int l = 1; l <= layers; ++l)
      all_d_[l] = carver.take<float>(rows * network_.ld(l));
    x_padded_ = carver.take<float>(rows * config_.inputs());
    y_padded_ = carver.take<int32_t>(rows);
    all_labels_ = carver.take<int32_t>(rows);
  };
  compute::Carver sizing;
  carve(sizing);
  compute::Carver carver(workspace_.reserve(sizing.used()));
  carve(carver);
  capacity_ = rows;
}

void RowExchange::gather(const float* send, float* recv, int64_t count) const {
  context_.allGather(send, recv, static_cast<size_t>(count), sdk::DType::Float32);
}

void RowExchange::handOff(compute::cuda::Event* event, const compute::Device& from,
                          const compute::Device& to) const {
  if (!streams_) return;
  event->record(from.stream);
  event->makeWait(to.stream);
}

void RowExchange::blockOverBatch(const Step& step, const RowShares& shares, int l) const {
  const int64_t rows = int64_t{shares.ranks} * shares.most;
  compute::GemmArgs g = network_.blockGradientOf(l, all_a_[l], inputLd(l), all_d_[l + 1],
                                                 network_.ld(l + 1), rows);
  const int64_t block = config_.offset(l), bias = config_.biasOffset(l);
  if (step.params_out != nullptr) {
    const float alpha = -step.lr / static_cast<float>(shares.total);
    g.alpha = alpha;
    g.beta = 1;
    g.c_in = step.params + block;
    g.c = step.params_out + block;
    compute::gemm(block_, g);
    compute::columnSum(block_, g.b, rows, g.n, g.ldb, alpha, step.params + bias,
                       step.params_out + bias);
    return;
  }
  g.c = step.grad + block;
  g.epilogue = compute::Epilogue::BiasGrad;
  g.bias_grad = step.grad + bias;
  compute::gemm(block_, g);
  if (step.updated) step.updated(block, config_.offset(l + 1), block_);
}

void RowExchange::run(const Step& step, const RowShares& shares) {
  const int layers = config_.layers();
  const int64_t rows = step.bad_rows ? 0 : shares.mine;
  const int64_t most = shares.most;
  if (streams_) {  // the inputs and last step's updates were written on the rank's stream
    start_->record(rank_.stream);
    start_->makeWait(compute_.stream);
    start_->makeWait(block_.stream);
  }
  // The rank's stream: this rank's inputs, padded to `most` rows, then gathered.
  const float* x_send = step.x;
  const int32_t* y_send = step.y;
  if (shares.mine < most) {
    if (rows > 0) {
      compute::copyMatrix(rank_, step.x, config_.inputs(), x_padded_, config_.inputs(), rows,
                          config_.inputs());
    }
    compute::fill(rank_, x_padded_ + rows * config_.inputs(), (most - rows) * config_.inputs(),
                  0.0f);
    // Labels as 32-bit words: a float copy and a fill with 0.0f move them bit for bit (label 0).
    float* y_words = reinterpret_cast<float*>(y_padded_);
    if (shares.mine > 0) {
      compute::copyMatrix(rank_, reinterpret_cast<const float*>(step.y), 1, y_words, 1,
                          shares.mine, 1);
    }
    compute::fill(rank_, y_words + shares.mine, most - shares.mine, 0.0f);
    x_send = x_padded_;
    y_send = y_padded_;
  }
  context_.allGather(y_send, all_labels_, static_cast<size_t>(most), sdk::DType::Int32);
  if (streams_) labels_ready_->record(rank_.stream);
  gather(x_send, all_a_[0], most * config_.inputs());
  if (rows < most) {  // the compute stream's padding: zero rows, whatever a step left there
    for (int l = 1; l < layers; ++l)
      compute::fill(compute_, network_.activation(l) + rows * network_.ld(l),
                    (most - rows) * network_.ld(l), 0.0f);
    for (int l = 1; l <= layers; ++l)
      compute::fill(compute_, network_.delta(l) + rows * network_.ld(l),
                    (most - rows) * network_.ld(l), 0.0f);
  }

  auto gather_activation = [&](int l) {  // after layer l wrote a[l + 1]
    if (l + 1 >= layers) return;
    handOff(a_ready_[l + 1].get(), compute_, rank_);
    gather(network_.activation(l + 1), all_a_[l + 1], most * network_.ld(l + 1));
  };
  if (step.bad_rows) {
    for (int l = 0; l < layers; ++l)
      gather_activation(l);
  } else {
    network_.forward(step.params, step.x, rows, gather_activation);
    compute::CrossEntropyArgs out = step.out;
    // A bad label anywhere in the batch zeroes every rank's dlogits (SGD then changes nothing)
    // and makes the other rules' divisor -infinity (an identity); else it is the batch's rows.
    out.invalid_zeroes_dlogits = true;
    out.all_labels = all_labels_;
    out.all_rows = int64_t{shares.ranks} * most;
    out.batch_rows = shares.total;
    out.rows_out = step.params_out == nullptr ? step.grad + config_.parameters() : nullptr;
    if (streams_) labels_ready_->makeWait(compute_.stream);
    network_.loss(step.y, rows, out, true);
  }
  handOff(d_ready_[layers].get(), compute_, rank_);
  gather(network_.delta(layers), all_d_[layers], most * network_.ld(layers));
  handOff(d_gathered_[layers].get(), rank_, block_);
  if (step.params_out == nullptr && step.bad_rows) {  // host: no loss ran here to set it
    compute::fill(rank_, step.grad + config_.parameters(), 1,
                  -std::numeric_limits<float>::infinity());
  }
  // A block's update in place must wait for the delta below it, which reads the old W (the
  // other rules update right after the block's GEMM, maybe in place too).
  const bool wait_delta = step.params_out == nullptr || step.params_out == step.params;
  for (int l = layers - 1; l >= 0; --l) {
    if (l > 0) {
      if (rows > 0) network_.deltaBelow(step.params, l, rows);
      if (streams_) d_ready_[l]->record(compute_.stream);
    }
    if (streams_ && l > 0 && wait_delta) d_ready_[l]->makeWait(block_.stream);
    blockOverBatch(step, shares, l);  // after every rank's d[l + 1] arrived
    if (l > 0) {
      if (streams_) d_ready_[l]->makeWait(rank_.stream);
      gather(network_.delta(l), all_d_[l], most * network_.ld(l));
      handOff(d_gathered_[l].get(), rank_, block_);
    }
  }
  // The rank's stream ends after everything of the step.
  handOff(compute_done_.get(), compute_, rank_);
  handOff(block_done_.get(), block_, rank_);
}

}  // namespace synk::mlp
