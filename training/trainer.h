#pragma once
// Training a model plugin data-parallel, in the spirit of Synkhronos' make_train_function: per
// step, local gradients -> all-reduce of the flat gradient -> the same update on every rank.
// Either one fused call (the model's train_step, which all-reduces inside the call, overlapping
// backward) or the Synkhronos way in three steps: grad(x, y) on every rank's share, an
// all_reduce(avg) of the gradient variable by the trainer when the model leaves it local, and
// update(). Plus epochs of shuffled batches, evaluation over a whole set in one call, and time to
// a target accuracy.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "synk/core/session.h"

namespace synk::training {

struct TrainerOptions {
  bool fused = true;
  std::string step_function = "train_step";  // (x, y) -> loss
  std::string grad_function = "grad";        // (x, y), writes grad_variable
  std::string grad_variable = "grad";
  // The trainer all-reduces grad_variable (avg; exact when shares are even) between grad and
  // update: for models whose grad leaves each rank's own gradient (the mlp: grad_reduce=none).
  bool all_reduce_gradient = false;
  std::string update_function = "update";  // ()
  std::string loss_function = "loss";      // (x, y) -> loss, accuracy
};

struct Evaluation {
  float loss = 0;
  float accuracy = 0;
};

class Trainer {
 public:
  Trainer(Session& session, const Model& model, TrainerOptions options = {});

  // One step on rows `batch` of (x, y). The loss (fused), or NaN.
  float step(const Data& x, const Data& y, const Selection& batch = {});
  // Loss and accuracy over every row of (x, y) in one call, each rank's share in `num_slices`.
  Evaluation evaluate(const Data& x, const Data& y, int num_slices = 1);
  // Pays the one-time costs before a timed fit -- resident data copied to the devices, buffers,
  // GEMM library kernels loaded, CUDA graphs captured -- as the PyTorch peer does before its
  // clock starts (data moved to the GPU, warm-up steps and capture, then parameters and optimizer
  // reset): one evaluation and `steps` steps on `batch`, then every variable put back to its value
  // before. Call it before training: rank-local variables must still be zero (else
  // InvalidArgument), since their per-rank values cannot be read back.
  void warmUp(const Data& x, const Data& y, const Selection& batch, const Data& test_x,
              const Data& test_y, int steps, int num_slices = 1);
  const Model& model() const { return model_; }

 private:
  Session& session_;
  Model model_;
  TrainerOptions options_;
  Function step_, grad_, update_, loss_;
};

// The batches of one epoch over `rows` rows: a fresh permutation per (seed, epoch) as index
// lists, or consecutive ranges when not shuffled; the last partial batch only if !drop_last.
struct EpochOptions {
  int64_t batch = 256;
  bool shuffle = true;
  bool drop_last = true;
  uint64_t seed = 0;
};
std::vector<Selection> epochBatches(int64_t rows, const EpochOptions& options, int epoch);

struct EpochReport {
  int epoch = 0;          // from 1
  double seconds = 0;     // since fit() began, the epoch's evaluation included
  double train_loss = 0;  // mean of the steps' losses (NaN when not fused)
  Evaluation test;
  int64_t steps = 0;
};

struct FitOptions {
  int max_epochs = 20;
  int warmup_steps = 0;        // Trainer::warmUp before the clock starts (0: none)
  double target_accuracy = 0;  // stop at the first evaluation reaching it; 0: run every epoch
  int eval_slices = 1;
  EpochOptions epoch;
  std::function<void(const EpochReport&)> progress{};  // after each epoch
};

struct FitResult {
  std::vector<EpochReport> epochs;
  bool reached = false;
  double seconds = 0;  // to the target when reached, else of every epoch
  // Where the first epoch's extra time goes: its first step and first evaluation carry one-time
  // costs (device copies of resident data, buffers, library plans, graph captures).
  double first_step_seconds = 0;
  double second_step_seconds = 0;
  double first_evaluation_seconds = 0;
  double warmup_seconds = 0;  // not counted in `seconds`
};

// Trains on (train_x, train_y), evaluates on (test_x, test_y) after every epoch, timing both.
FitResult fit(Trainer& trainer, const Data& train_x, const Data& train_y, const Data& test_x,
              const Data& test_y, const FitOptions& options);

}  // namespace synk::training
