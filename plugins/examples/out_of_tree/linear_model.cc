// Model "linear": y ≈ w[0] · x + w[1], fitted by gradient descent on the mean squared error.
// One variable, w (float32, shape (2,), zeros), and one function:
//   step(x, y) -> loss   reads w, updates w to w - lr · ∇loss of this rank's rows; loss is their
//                        mean squared error before the update.
// On ranks of equal rows, averaging w over the ranks after each step (Session::allReduce) gives
// the step of one process on every row. Host device only.
#include <string>

#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;

constexpr float kLearningRate = 0.5f;

class Linear {
 public:
  // In the master, before fork: a declaration only (no CUDA, no threads).
  static sdk::Spec spec() {
    sdk::Spec spec("linear");
    spec.variable("w", sdk::DType::Float32, {2});
    spec.function("step")
        .input("x", sdk::DType::Float32, 1)
        .input("y", sdk::DType::Float32, 1)
        .read("w")
        .update("w")
        .output("loss", sdk::DType::Float32, sdk::Shape{});
    return spec;
  }
  // Checked when the plugin is loaded: every declared function has a handler.
  static sdk::Handlers<Linear> handlers() {
    return sdk::Handlers<Linear>().on("step", &Linear::step);
  }

  // In each rank, after fork.
  explicit Linear(const sdk::Context& context) {
    if (context.isCuda()) throw sdk::Error(sdk::Status::Unsupported, "linear runs on the host");
  }

  void step(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x"), y = call.input("y");
    if (y.dim(0) != x.dim(0)) {
      throw sdk::Error(sdk::Status::InvalidArgument, "x has " + std::to_string(x.dim(0)) +
                                                         " rows, y " + std::to_string(y.dim(0)));
    }
    const float* w = call.read("w").as<float>();
    const int64_t n = x.dim(0);
    double loss = 0, grad_slope = 0, grad_intercept = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double error = w[0] * x.as<float>()[i] + w[1] - y.as<float>()[i];
      loss += error * error;
      grad_slope += 2 * error * x.as<float>()[i];
      grad_intercept += 2 * error;
    }
    const double rows = n > 0 ? static_cast<double>(n) : 1.0;  // no rows: no change
    float* w_new = call.update("w").as<float>();
    w_new[0] = static_cast<float>(w[0] - kLearningRate * grad_slope / rows);
    w_new[1] = static_cast<float>(w[1] - kLearningRate * grad_intercept / rows);
    *call.output("loss", {}).as<float>() = static_cast<float>(loss / rows);
  }
};

}  // namespace

SYNK_PLUGIN(Linear)
