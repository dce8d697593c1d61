// Trains the "linear" model (linear_model.cc) data-parallel on 2 CPU ranks and checks the result:
//   train_linear PATH/liblinear.so
// x = 0, 1/64, ..., 63/64 and y = 3x + 1 in shared memory; each step scatters the rows over the
// ranks, every rank steps w on its half, then w is averaged over the ranks. Exit 0 when w reached
// (3, 1) and is the same on every rank; 1 with a message otherwise.
#include <cmath>
#include <cstdio>
#include <exception>

#include "synk/synk.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: train_linear PATH/liblinear.so\n");
    return 2;
  }
  try {
    // Before anything else: the ranks are forked from this process.
    synk::Session session = synk::fork({.n_parallel = 2, .backend = "cpu"});
    synk::Model model = session.load(argv[1]);  // a path; a name searches SYNK_PLUGIN_PATH
    synk::Function step = session.function(model, "step");  // x and y are scattered
    synk::Variable w = model.variable("w");

    const int64_t rows = 64;
    synk::Array x_values(synk::DType::Float32, {rows}), y_values(synk::DType::Float32, {rows});
    for (int64_t i = 0; i < rows; ++i) {
      x_values.as<float>()[i] = static_cast<float>(i) / rows;
      y_values.as<float>()[i] = 3 * x_values.as<float>()[i] + 1;
    }
    synk::Data x = session.data(x_values, {.name = "x"});
    synk::Data y = session.data(y_values, {.name = "y"});

    float first_loss = 0, loss = 0;
    for (int i = 0; i < 300; ++i) {
      loss = step({x, y}).at(0).as<float>()[0];  // the mean of the ranks' losses
      if (i == 0) first_loss = loss;
      session.allReduce({w}, synk::ReduceOp::Avg);
    }
    const synk::Array on_master = w.getValue();
    const synk::Array on_rank1 = session.getValue(1, {w}).at(0);
    const float slope = on_master.as<float>()[0], intercept = on_master.as<float>()[1];
    std::printf("loss %.6f -> %.6f; w = (%.4f, %.4f) on rank 0, (%.4f, %.4f) on rank 1\n",
                first_loss, loss, slope, intercept, on_rank1.as<float>()[0],
                on_rank1.as<float>()[1]);
    if (std::fabs(slope - 3) > 1e-2f || std::fabs(intercept - 1) > 1e-2f || !(loss < 1e-4f)) {
      std::fprintf(stderr, "train_linear: w did not reach (3, 1)\n");
      return 1;
    }
    if (on_rank1.as<float>()[0] != slope || on_rank1.as<float>()[1] != intercept) {
      std::fprintf(stderr, "train_linear: the ranks' w differ\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_linear: %s\n", e.what());
    return 1;
  }
}
