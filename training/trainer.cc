#include "synk/training/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "synk/core/error.h"

namespace synk::training {

Trainer::Trainer(Session& session, const Model& model, TrainerOptions options)
    : session_(session), model_(model), options_(std::move(options)) {
  if (options_.fused) {
    step_ = session_.function(model_, options_.step_function);
  } else {
    grad_ = session_.function(model_, options_.grad_function);
    update_ = session_.function(model_, options_.update_function);
  }
  loss_ = session_.function(model_, options_.loss_function);
}

float Trainer::step(const Data& x, const Data& y, const Selection& batch) {
  if (options_.fused) return step_({x, y}, {.batch = batch}).at(0).as<float>()[0];
  grad_({x, y}, {.batch = batch});
  if (options_.all_reduce_gradient) {
    session_.allReduce({model_.variable(options_.grad_variable)}, ReduceOp::Avg);
  }
  update_({});
  return std::numeric_limits<float>::quiet_NaN();
}

Evaluation Trainer::evaluate(const Data& x, const Data& y, int num_slices) {
  const std::vector<Array> out = loss_({x, y}, {.num_slices = num_slices});
  return {out.at(0).as<float>()[0], out.at(1).as<float>()[0]};
}

void Trainer::warmUp(const Data& x, const Data& y, const Selection& batch, const Data& test_x,
                     const Data& test_y, int steps, int num_slices) {
  if (steps <= 0) return;
  const std::vector<Variable> vars = model_.variables();
  std::vector<Array> before;
  for (const Variable& v : vars) {
    before.push_back(v.getValue());
    if (v.kind() != VariableKind::RankLocal) continue;
    const Array& value = before.back();
    bool zero = true;
    for (int64_t i = 0; i < value.size() && zero; ++i)
      zero = value.flat(i) == 0;
    if (!zero) {
      throw InvalidArgument(str("warm-up of model '", model_.name(), "': rank-local variable '",
                                v.name(), "' already holds values; warm up before training"));
    }
  }
  // The evaluation first: its larger batch may grow the model's buffers, and steps captured
  // before that would be captured again in the first epoch.
  evaluate(test_x, test_y, num_slices);
  for (int k = 0; k < steps; ++k)
    step(x, y, batch);
  const std::vector<ArrayView> values(before.begin(), before.end());
  session_.broadcast(vars, values);  // every rank back to the master's earlier values
}

std::vector<Selection> epochBatches(int64_t rows, const EpochOptions& options, int epoch) {
  if (options.batch <= 0) throw InvalidArgument(str("batch size ", options.batch, " must be > 0"));
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  if (options.shuffle) {
    std::mt19937_64 rng(options.seed * 1000003 + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), rng);
  }
  std::vector<Selection> batches;
  for (int64_t begin = 0; begin < rows; begin += options.batch) {
    const int64_t end = std::min(rows, begin + options.batch);
    if (end - begin < options.batch && options.drop_last) break;
    if (options.shuffle) {
      batches.push_back(
          Selection::indices(std::vector<int64_t>(order.begin() + begin, order.begin() + end)));
    } else {
      batches.push_back(Selection::range(begin, end));
    }
  }
  return batches;
}

FitResult fit(Trainer& trainer, const Data& train_x, const Data& train_y, const Data& test_x,
              const Data& test_y, const FitOptions& options) {
  using Clock = std::chrono::steady_clock;
  FitResult result;
  if (options.warmup_steps > 0) {
    // A batch like the epochs' (an index list of the same size: the same launches), from a
    // permutation no epoch uses.
    const auto warmup_start = Clock::now();
    const std::vector<Selection> batches = epochBatches(train_y.length(), options.epoch, 0);
    if (!batches.empty()) {
      trainer.warmUp(train_x, train_y, batches.front(), test_x, test_y, options.warmup_steps,
                     options.eval_slices);
    }
    result.warmup_seconds = std::chrono::duration<double>(Clock::now() - warmup_start).count();
  }
  const auto start = Clock::now();
  for (int epoch = 1; epoch <= options.max_epochs; ++epoch) {
    EpochReport report;
    report.epoch = epoch;
    double loss_sum = 0;
    for (const Selection& batch : epochBatches(train_y.length(), options.epoch, epoch)) {
      // The first two steps are timed on their own: they show where the one-time costs go.
      const bool timed = epoch == 1 && report.steps < 2;
      const auto before = timed ? Clock::now() : Clock::time_point{};
      loss_sum += trainer.step(train_x, train_y, batch);  // returns once the step is done
      if (timed) {
        (report.steps == 0 ? result.first_step_seconds : result.second_step_seconds) =
            std::chrono::duration<double>(Clock::now() - before).count();
      }
      ++report.steps;
    }
    report.train_loss = report.steps ? loss_sum / double(report.steps) : 0.0;
    const auto before_evaluation = Clock::now();
    report.test = trainer.evaluate(test_x, test_y, options.eval_slices);
    if (epoch == 1) {
      result.first_evaluation_seconds =
          std::chrono::duration<double>(Clock::now() - before_evaluation).count();
    }
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.epochs.push_back(report);
    if (options.progress) options.progress(report);
    if (options.target_accuracy > 0 && report.test.accuracy >= options.target_accuracy) {
      result.reached = true;
      break;
    }
  }
  result.seconds = result.epochs.empty() ? 0.0 : result.epochs.back().seconds;
  return result;
}

}  // namespace synk::training
