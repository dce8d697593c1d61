// Model "mlp": a classifier of configurable widths and depth (ReLU, softmax cross-entropy) with
// an update rule, for data-parallel training (plugins/mlp/README.md).
//   train_step(x: float32 (n, inputs), y: int32 (n,)) -> loss: float32 ()
//       forward, backward, the exchange over the ranks (the gradient's all-reduce in buckets
//       overlapping backward, or every layer's rows all-gathered: mlp_rows.h), update of params
//       and the rule's state; adds to the rank-local metrics.
//   loss(x, y) -> loss, accuracy: float32 ()     this rank's means (the runtime weighs by rows)
//   grad(x, y)                                   the mean gradient of the batch into `grad`
//   update()                                     applies `grad` to params with the rule
// Variables: params, grad (float32, every weight and bias), opt_<state> (the rule's), opt_step
// (int64, adam and adamax), metrics (float64 [loss sum, correct, samples], rank_local sum).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synk/plugins/compute/cuda_resources.h"
#include "synk/plugins/compute/gemm_lt.h"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/compute/tensor_view.h"
#include "synk/plugins/compute/update_rules.h"
#include "synk/plugins/mlp/mlp_config.h"
#include "synk/plugins/mlp/mlp_network.h"
#include "synk/plugins/mlp/mlp_reducer.h"
#include "synk/plugins/mlp/mlp_rows.h"
#include "synk/plugins/sdk/synk_sdk.h"

namespace synk::mlp {
namespace {

using sdk::DType;

std::vector<std::string> stateVariables(compute::Rule rule) {
  std::vector<std::string> names;
  for (const std::string& state : compute::stateNames(rule))
    names.push_back("opt_" + state);
  return names;
}

// The variables an update reads and writes, in this order: params, states..., opt_step.
std::vector<std::string> updateVariables(const Config& config) {
  std::vector<std::string> names = {"params"};
  for (const std::string& state : stateVariables(config.rule))
    names.push_back(state);
  if (compute::countsSteps(config.rule)) names.push_back("opt_step");
  return names;
}

uint64_t keyOf(const void* pointer) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer));
}

class Mlp {
 public:
  static sdk::Spec spec(const sdk::Options& options) {
    const Config config = Config::fromOptions(options);
    const int64_t n = config.parameters();
    sdk::Spec spec("mlp");
    spec.variable("params", DType::Float32, {n}).initialFrom([config](std::byte* out, size_t) {
      config.initialParameters(reinterpret_cast<float*>(out));
    });
    spec.variable("grad", DType::Float32, {n});
    for (const std::string& state : stateVariables(config.rule))
      spec.variable(state, DType::Float32, {n});
    if (compute::countsSteps(config.rule)) spec.variable("opt_step", DType::Int64, {});
    spec.variable("metrics", DType::Float64, {3}).rankLocal(sdk::Reduction::Sum);

    sdk::Function& train = spec.function("train_step")
                               .input("x", DType::Float32, 2)
                               .input("y", DType::Int32, 1)
                               .output("loss", DType::Float32, sdk::Shape{});
    for (const std::string& v : updateVariables(config))
      train.read(v).update(v);
    train.read("metrics").update("metrics");
    spec.function("loss")
        .input("x", DType::Float32, 2)
        .input("y", DType::Int32, 1)
        .read("params")
        .output("loss", DType::Float32, sdk::Shape{})
        .output("accuracy", DType::Float32, sdk::Shape{});
    spec.function("grad")
        .input("x", DType::Float32, 2)
        .input("y", DType::Int32, 1)
        .read("params")
        .update("grad");
    sdk::Function& update = spec.function("update").read("grad");
    for (const std::string& v : updateVariables(config))
      update.read(v).update(v);
    return spec;
  }

  // What the graph cache did (SYNK_LOG_LEVEL=debug): captures beyond a handful mean the step's
  // buffers keep moving and every step pays a capture.
  ~Mlp() {
    if (!graphs_) return;
    context_.log(sdk::LogLevel::Debug, "mlp rank " + std::to_string(context_.rank()) + ": " +
                                           std::to_string(graphs_->launches()) +
                                           " graph launches, " +
                                           std::to_string(graphs_->captures()) + " captures");
  }

  static sdk::Handlers<Mlp> handlers() {
    return sdk::Handlers<Mlp>()
        .on("train_step", &Mlp::trainStep)
        .on("loss", &Mlp::loss)
        .on("grad", &Mlp::grad)
        .on("update", &Mlp::update);
  }

  explicit Mlp(const sdk::Context& context)
      : config_(Config::fromOptions(context.options())),
        states_(stateVariables(config_.rule)),
        context_(context),
        network_(config_, context) {
    if (context.isCuda()) {
      // Several ranks: backward on a stream of its own, so NCCL (on the rank's stream) overlaps it.
      if (context.nRanks() > 1) compute_stream_ = std::make_unique<compute::cuda::Stream>();
      void* work = compute_stream_ ? compute_stream_->get() : context.stream();
      // With cuBLASLt (the default) the cuBLAS handles only scale C for k = 0: a small workspace.
      const size_t blas_workspace = config_.gemm == GemmPath::Cublas
                                        ? compute::cuda::BlasHandle::kWorkspaceBytes
                                        : compute::cuda::BlasHandle::kSmallWorkspaceBytes;
      blas_ = std::make_unique<compute::cuda::BlasHandle>(context, work, blas_workspace);
      if (config_.gemm != GemmPath::Cublas) {
        lt_ = std::make_unique<compute::cuda::LtMatmul>(context, config_.gemm == GemmPath::LtTuned);
      }
      device_ = {true, work, blas_->get(), lt_.get()};
      // No GEMM runs on the rank's stream (updates, gathers, copies): no handles, so one added
      // there fails naming the missing handle instead of running on the compute stream the
      // cuBLAS handle is bound to.
      rank_device_ = {true, context.stream(), nullptr, nullptr};
      // Several ranks too, when their collectives are NCCL's (context.comm()): NCCL calls are
      // captured with the rest of the step, which then is one launch on every rank. Host-staged
      // collectives (ranks sharing a GPU) wait on the host inside the step: no graph then.
      if (config_.cuda_graph && (context.nRanks() == 1 || context.comm() != nullptr)) {
        graphs_ = std::make_unique<compute::cuda::GraphCache>(context, 16);
      }
    }
    network_.setDevice(device_);
    reducer_ = std::make_unique<GradientReducer>(config_, context, device_.stream);
    if (context.nRanks() > 1) {
      share_reducer_ = std::make_unique<GradientReducer>(config_, context, device_.stream,
                                                         /*count_slot=*/false);
    }
    rows_possible_ = context.nRanks() > 1 && context.hasAllGather();
  }

 private:
  struct Batch {
    const float* x;
    const int32_t* y;
    int64_t rows;
    std::string bad_label;  // host: why the labels are unusable, else empty
  };

  Batch takeBatch(sdk::Call& call) const {
    const auto x = compute::matrixOf<float>(call.input("x"));
    const auto y = compute::vectorOf<int32_t>(call.input("y"), x.rows);
    if (x.cols != config_.inputs()) {
      throw sdk::Error(sdk::Status::InvalidArgument,
                       "x has " + std::to_string(x.cols) + " features per row; this mlp takes " +
                           std::to_string(config_.inputs()) + " (option 'inputs')");
    }
    Batch batch{x.data, y.data, x.rows, {}};
    for (int64_t i = 0; !context_.isCuda() && i < y.size && batch.bad_label.empty(); ++i) {
      if (y.data[i] < 0 || y.data[i] >= config_.classes()) {
        batch.bad_label = "label " + std::to_string(y.data[i]) + " of row " + std::to_string(i) +
                          " is outside [0, " + std::to_string(config_.classes()) + ")";
      }
    }
    return batch;
  }

  // Forward, loss and backward of a batch into the network's gradient (count slot included),
  // all-reduced when `reduce`; `reduced(begin, end)` runs as each bucket's all-reduce is issued
  // (GradientReducer::written). A host batch with a bad label still takes part in every bucket
  // (zeros, and a count of -infinity that every rank sees after the first bucket).
  void gradientPass(const float* params, const Batch& batch, compute::CrossEntropyArgs out,
                    bool reduce, const std::function<void(int64_t, int64_t)>& reduced = nullptr) {
    float* grad = network_.gradient();
    reducer_->begin();
    if (batch.bad_label.empty()) {
      network_.forward(params, batch.x, batch.rows);
      out.rows_out = grad + config_.parameters();
      network_.loss(batch.y, batch.rows, out, true);
      const int chunks = reduce ? reducer_->tailChunks() : 1;
      network_.backward(params, batch.rows, grad, chunks, [&](int64_t from) {
        if (reduce) reducer_->written(from, grad, reduced);
      });
    } else {
      compute::fill(device_, grad, config_.parameters(), 0.0f);
      compute::fill(device_, grad + config_.parameters(), 1,
                    -std::numeric_limits<float>::infinity());
      if (reduce) reducer_->written(0, grad, reduced);
    }
    reducer_->join();
  }

  // Whether train_step updates bucket by bucket: several ranks (something is all-reduced), and
  // no step counter that one update per bucket would advance more than once.
  bool updatesPerBucket(const compute::UpdateArgs& update) const {
    return context_.nRanks() > 1 &&
           !(compute::countsSteps(config_.rule) && update.step == update.step_out);
  }

  // The update of the parameters in [begin, end) (a bucket's range; the count slot past the
  // parameters is not one), on the rank's stream after that bucket's all-reduce: the update of
  // one layer overlaps backward of the next, and only the last bucket's is left after backward.
  // Element-wise, so the result equals one update of the whole vector.
  void updateRange(compute::UpdateArgs args, int64_t begin, int64_t end,
                   const compute::Device& device) const {
    end = std::min(end, config_.parameters());
    if (end <= begin) return;
    args.n = end - begin;
    args.param += begin;
    args.param_out += begin;
    args.grad += begin;
    for (int s = 0; s < 2; ++s) {
      if (args.state[s]) args.state[s] += begin;
      if (args.state_out[s]) args.state_out[s] += begin;
    }
    compute::applyUpdate(device, config_.rule, config_.hyper, args);
  }

  // SGD inside the backward GEMMs (Network::backwardSgd), the default wherever it applies: one
  // rank, where there is no gradient to all-reduce, so the step needs nothing but the local
  // gradient and folding it saves the gradient's write and the update pass (the fastest correct
  // choice). With several ranks the update needs the all-reduced sum, which exists only after
  // (bucketed: while) backward runs, so the plain grad -> all_reduce -> update path stays. Also a
  // usable batch: rows to divide by, and a host batch with a bad label fails the call unchanged.
  bool fusesUpdate(const Batch& batch) const {
    return config_.fuse_update && config_.rule == compute::Rule::Sgd && context_.nRanks() == 1 &&
           batch.rows > 0 && batch.bad_label.empty();
  }

  // Every rank fails the same call when some rank's host batch had a bad label. `counted`: the
  // all-reduced count slot tells the others (a fused step runs on one rank; with the rows
  // exchange the bad rank fails the call alone, which leaves every rank's variables unchanged).
  void checkBatches(const Batch& batch, bool counted) const {
    if (!batch.bad_label.empty()) throw sdk::Error(sdk::Status::InvalidArgument, batch.bad_label);
    if (context_.isCuda() || !counted) return;
    if (!(network_.gradient()[config_.parameters()] >= 0.0f)) {
      throw sdk::Error(sdk::Status::InvalidArgument,
                       "another rank's share of the batch has a label outside [0, " +
                           std::to_string(config_.classes()) + ")");
    }
  }

  compute::UpdateArgs updateArgs(sdk::Call& call, const float* grad, const float* divisor) const {
    compute::UpdateArgs a;
    a.n = config_.parameters();
    a.param = call.read("params").as<float>();
    a.param_out = call.update("params").as<float>();
    a.grad = grad;
    a.grad_divisor = divisor;
    for (size_t s = 0; s < states_.size(); ++s) {
      a.state[s] = call.read(states_[s]).as<float>();
      a.state_out[s] = call.update(states_[s]).as<float>();
    }
    if (compute::countsSteps(config_.rule)) {
      a.step = call.read("opt_step").as<int64_t>();
      a.step_out = call.update("opt_step").as<int64_t>();
    }
    return a;
  }

  // The rows exchange, made on the first step that takes it (outside any graph capture: a key's
  // first step runs as is), so ranks that only ever all-reduce the gradient never hold its
  // stream, cuBLAS handle and cuBLASLt workspace.
  RowExchange& rowExchange() {
    if (rows_) return *rows_;
    if (compute_stream_) {
      // The block GEMMs run on a third stream, beside the deltas (compute stream) and the
      // gathers (the rank's): a cuBLAS handle and a workspace of their own.
      const bool lt = config_.gemm != GemmPath::Cublas;
      block_stream_ = std::make_unique<compute::cuda::Stream>();
      block_blas_ = std::make_unique<compute::cuda::BlasHandle>(
          context_, block_stream_->get(),
          lt ? compute::cuda::BlasHandle::kSmallWorkspaceBytes
             : compute::cuda::BlasHandle::kWorkspaceBytes);
      if (lt) {
        block_lt_ =
            std::make_unique<compute::cuda::LtMatmul>(context_, config_.gemm == GemmPath::LtTuned);
      }
      block_device_ = {true, block_stream_->get(), block_blas_->get(), block_lt_.get()};
    }
    rows_ = std::make_unique<RowExchange>(config_, context_, network_, device_, rank_device_,
                                          block_device_);
    return *rows_;
  }

  // The rows exchange for this call (Config::Exchange), or nothing (the gradient's all-reduce).
  // `rank_rows`: the call's rankRows().
  std::optional<RowShares> rowExchangeFor(const std::vector<int64_t>& rank_rows) const {
    if (!rows_possible_ || config_.exchange == Exchange::Gradient) return std::nullopt;
    if (rank_rows.empty()) return std::nullopt;  // a sliced call: rows are not known
    const RowShares shares = rowSharesOf(rank_rows, context_.rank());
    if (config_.exchange == Exchange::Auto && !(context_.isCuda() && rowsPay(config_, shares))) {
      return std::nullopt;
    }
    return shares;
  }

  void trainStep(sdk::Call& call) {
    const Batch batch = takeBatch(call);
    float* loss = call.output("loss", {}).as<float>();
    // Every rank's rows, read once for the step (rankRows() builds a vector). Both uses need
    // several ranks, so one rank reads nothing and its step allocates nothing here.
    const std::vector<int64_t> rank_rows =
        context_.nRanks() > 1 ? call.rankRows() : std::vector<int64_t>{};
    const std::optional<RowShares> shares = rowExchangeFor(rank_rows);
    if (shares) rowExchange().reserve(*shares);
    network_.reserve(batch.rows);
    float* grad = network_.gradient();
    const compute::UpdateArgs update = updateArgs(call, grad, grad + config_.parameters());
    compute::CrossEntropyArgs out;
    out.mean_loss = loss;
    out.metrics_in = call.read("metrics").as<double>();
    out.metrics_out = call.update("metrics").as<double>();
    const bool fused = !shares && fusesUpdate(batch);
    const int64_t share_rows = shares || fused ? 0 : sgdShareRows(rank_rows, update);
    // A bad label on CUDA then zeroes every row's gradient: the step leaves params as they were
    // (summed shares: restored at the end; finite shares keep the all-reduce finite meanwhile).
    out.invalid_zeroes_dlogits = fused || share_rows > 0;
    auto body = [&] {
      if (shares) return rowsStep(batch, out, update, *shares);
      if (share_rows > 0) return sgdShareStep(update, batch, out, share_rows);
      if (fused) {
        network_.forward(update.param, batch.x, batch.rows);
        network_.loss(batch.y, batch.rows, out, true);
        network_.backwardSgd(update.param, update.param_out, batch.rows, config_.hyper.lr);
        return;
      }
      if (updatesPerBucket(update)) {
        gradientPass(update.param, batch, out, true, [&](int64_t begin, int64_t end) {
          updateRange(update, begin, end, rank_device_);
        });
        return;
      }
      gradientPass(update.param, batch, out, true);
      compute::applyUpdate(rank_device_, config_.rule, config_.hyper, update);
    };
    // Whether the count slot tells the others of a bad label: not where SGD ran in the GEMMs.
    const bool counted = !fused && !(shares && rowsFoldSgd());
    if (!graphs_) {
      body();
      return checkBatches(batch, counted);
    }
    // Everything the launches bake in: buffers (the runtime rotates the update buffers) and size.
    std::vector<uint64_t> key = {
        keyOf(batch.x),      keyOf(batch.y),          uint64_t(batch.rows),
        keyOf(loss),         keyOf(out.metrics_in),   keyOf(out.metrics_out),
        keyOf(update.param), keyOf(update.param_out), network_.generation()};
    if (shares) {
      key.insert(key.end(), {uint64_t(shares->most), uint64_t(shares->total), rows_->generation()});
    }
    key.push_back(uint64_t(share_rows));  // the step's size, -lr / the batch's rows, is baked in
    for (int s = 0; s < 2; ++s) {
      key.push_back(keyOf(update.state[s]));
      key.push_back(keyOf(update.state_out[s]));
    }
    key.push_back(keyOf(update.step));
    key.push_back(keyOf(update.step_out));
    graphs_->run(key, context_.stream(), body);
  }

  bool rowsFoldSgd() const { return config_.rule == compute::Rule::Sgd && config_.fuse_update; }

  // The whole batch's rows where train_step sums SGD shares (sgdShareStep), else 0: several
  // ranks, SGD folded into the GEMMs (fuse_update), every share known (not a sliced call), rows
  // to divide by, and parameters updated out of place (the shares are written while backward
  // still reads the old ones). `rank_rows`: the call's rankRows().
  int64_t sgdShareRows(const std::vector<int64_t>& rank_rows,
                       const compute::UpdateArgs& update) const {
    if (!share_reducer_ || !rowsFoldSgd() || update.param == update.param_out) return 0;
    int64_t total = 0;
    for (int64_t rows : rank_rows)
      total += rows;
    return total;
  }

  // SGD on several ranks with no update pass (Network::backwardSgdShare): every rank writes its
  // share of the step into params_out, rank 0 the parameters plus its share, and the sum over
  // the ranks of params_out, all-reduced bucket by bucket as backward writes it, is the stepped
  // parameters on every rank (the same bits: one all-reduce result). The row counts are summed
  // on their own; one of -infinity (a bad label on some rank: CUDA's loss writes it, a host
  // batch says so) restores the old parameters on every rank at the end.
  void sgdShareStep(const compute::UpdateArgs& update, const Batch& batch,
                    compute::CrossEntropyArgs out, int64_t total_rows) {
    float* count = network_.gradient() + config_.parameters();
    share_reducer_->begin();
    const bool usable = batch.bad_label.empty();
    if (usable) {
      network_.forward(update.param, batch.x, batch.rows);
      out.rows_out = count;
      network_.loss(batch.y, batch.rows, out, true);
    } else {
      compute::fill(device_, count, 1, -std::numeric_limits<float>::infinity());
    }
    share_reducer_->reduceScalar(count);
    const float step = -config_.hyper.lr / static_cast<float>(total_rows);
    network_.backwardSgdShare(
        update.param, update.param_out, usable ? batch.rows : 0, step, context_.rank() == 0,
        share_reducer_->tailChunks(),
        [&](int64_t from) { share_reducer_->written(from, update.param_out); });
    share_reducer_->join();
    compute::restoreIfInvalid(rank_device_, count, update.param, update.param_out,
                              config_.parameters());
  }

  // train_step through the rows exchange (mlp_rows.h): SGD inside the block GEMMs, other rules
  // through the summed gradient and their update, bucket by bucket where they can.
  void rowsStep(const Batch& batch, const compute::CrossEntropyArgs& out,
                const compute::UpdateArgs& update, const RowShares& shares) {
    RowExchange::Step step;
    step.params = update.param;
    step.x = batch.x;
    step.y = batch.y;
    step.out = out;
    step.bad_rows = !batch.bad_label.empty();
    if (rowsFoldSgd()) {
      step.params_out = update.param_out;
      step.lr = config_.hyper.lr;
      return rows_->run(step, shares);
    }
    step.grad = network_.gradient();
    const bool per_block = updatesPerBucket(update);
    if (per_block) {
      step.updated = [&](int64_t begin, int64_t end, const compute::Device& device) {
        updateRange(update, begin, end, device);
      };
    }
    rows_->run(step, shares);
    if (!per_block) compute::applyUpdate(rank_device_, config_.rule, config_.hyper, update);
  }

  void loss(sdk::Call& call) {
    const Batch batch = takeBatch(call);
    if (!batch.bad_label.empty()) throw sdk::Error(sdk::Status::InvalidArgument, batch.bad_label);
    compute::CrossEntropyArgs out;
    out.mean_loss = call.output("loss", {}).as<float>();
    out.accuracy = call.output("accuracy", {}).as<float>();
    network_.reserve(batch.rows);
    reducer_->begin();
    network_.forward(call.read("params").as<float>(), batch.x, batch.rows);
    network_.loss(batch.y, batch.rows, out, false);
    reducer_->join();
  }

  void grad(sdk::Call& call) {
    const Batch batch = takeBatch(call);
    network_.reserve(batch.rows);
    gradientPass(call.read("params").as<float>(), batch, {}, config_.reduce_in_grad);
    checkBatches(batch, true);
    const float* grad = network_.gradient();
    compute::divideBy(rank_device_, call.update("grad").as<float>(), grad, config_.parameters(),
                      grad + config_.parameters());
  }

  void update(sdk::Call& call) {
    compute::applyUpdate(rank_device_, config_.rule, config_.hyper,
                         updateArgs(call, call.read("grad").as<float>(), nullptr));
  }

  Config config_;
  std::vector<std::string> states_;  // the update rule's state variables, named once
  sdk::Context context_;
  std::unique_ptr<compute::cuda::Stream> compute_stream_;
  std::unique_ptr<compute::cuda::BlasHandle> blas_;
  std::unique_ptr<compute::cuda::LtMatmul> lt_;
  std::unique_ptr<compute::cuda::Stream> block_stream_;  // several ranks: the rows exchange's
  std::unique_ptr<compute::cuda::BlasHandle> block_blas_;
  std::unique_ptr<compute::cuda::LtMatmul> block_lt_;
  compute::Device device_ = compute::hostDevice();        // forward, backward
  compute::Device rank_device_ = compute::hostDevice();   // updates (after the all-reduce)
  compute::Device block_device_ = compute::hostDevice();  // the rows exchange's block GEMMs
  Network network_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<GradientReducer> share_reducer_;  // several ranks: sgdShareStep's sums
  bool rows_possible_ = false;         // several ranks, a host with all_gather (ABI 1.4)
  std::unique_ptr<RowExchange> rows_;  // made by rowExchange() on the first step with rows
  std::unique_ptr<compute::cuda::GraphCache> graphs_;
};

}  // namespace
}  // namespace synk::mlp

SYNK_PLUGIN(synk::mlp::Mlp)
