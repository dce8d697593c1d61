// synk-bench's test model (host only): a linear model y ~ x . w over 16 weights (column j of x
// uses weight j % 16), with the step shapes of the mlp contract (x: float32 [N, D], y: int32
// [N]), so the harness's tests run without the mlp plugin.
//   train_step(x, y) -> loss            parameters decay by a fixed factor: identical on ranks
//   train_step_diverging(x, y) -> loss  a gradient step on the rank's own rows: ranks diverge
//   grad(x, y) -> loss                  the rank's gradient into `grad`
//   update()                            params -= lr * grad
//   slow_step(x, us) -> loss            sleeps `us` microseconds (interrupt and kill tests)
//   straggler_step(x, us) -> loss       rank 1 sleeps `us` microseconds, the others none
//   fail_step(x) -> loss                fails on rank 1 (a failed point)
#include <chrono>
#include <thread>
#include <vector>

#include "synk/plugins/sdk/synk_sdk.h"

namespace sdk = synk::sdk;
using sdk::DType;

namespace {

constexpr int kWeights = 16;
constexpr float kLearningRate = 0.01f;

class Toy {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("bench_toy");
    spec.variable("params", DType::Float32, {kWeights})
        .initialValues<float>({0.00f, 0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f, 0.09f,
                               0.10f, 0.11f, 0.12f, 0.13f, 0.14f, 0.15f});
    spec.variable("grad", DType::Float32, {kWeights});
    for (const char* name : {"train_step", "train_step_diverging", "grad"}) {
      auto& f = spec.function(name)
                    .input("x", DType::Float32, 2)
                    .input("y", DType::Int32, 1)
                    .read("params")
                    .output("loss", DType::Float32, 0);
      f.update(std::string(name) == "grad" ? "grad" : "params");
    }
    spec.function("update").read("params").read("grad").update("params");
    spec.function("slow_step")
        .input("x", DType::Float32, 2)
        .input("us", DType::Int32, 0)
        .output("loss", DType::Float32, 0);
    spec.function("straggler_step")
        .input("x", DType::Float32, 2)
        .input("us", DType::Int32, 0)
        .output("loss", DType::Float32, 0);
    spec.function("fail_step").input("x", DType::Float32, 2).output("loss", DType::Float32, 0);
    return spec;
  }

  explicit Toy(const sdk::Context& context) : rank_(context.rank()) {
    if (context.isCuda()) throw sdk::Error(sdk::Status::Unsupported, "bench_toy runs on the host");
  }

  void call(std::string_view name, sdk::Call& call) {
    if (name == "update") {
      const float* w = call.read("params").as<float>();
      const float* g = call.read("grad").as<float>();
      float* out = call.update("params").as<float>();
      for (int k = 0; k < kWeights; ++k)
        out[k] = w[k] - kLearningRate * g[k];
      return;
    }
    const sdk::ConstTensor x = call.input("x");
    if (name == "fail_step") {
      if (rank_ == 1)
        throw sdk::Error(sdk::Status::Internal, "fail_step fails on rank 1 by design");
      *call.output("loss", {}).as<float>() = 0;
      return;
    }
    if (name == "slow_step" || (name == "straggler_step" && rank_ == 1)) {
      std::this_thread::sleep_for(std::chrono::microseconds(*call.input("us").as<int32_t>()));
    }
    if (name == "slow_step" || name == "straggler_step") {
      *call.output("loss", {}).as<float>() = 0;
      return;
    }
    const int64_t rows = x.dim(0), cols = x.dim(1);
    const float* xs = x.as<float>();
    const int32_t* ys = call.input("y").as<int32_t>();
    const float* w = call.read("params").as<float>();
    float gradient[kWeights] = {};
    double loss = 0;
    for (int64_t n = 0; n < rows; ++n) {
      const float* row = xs + n * cols;
      float prediction = 0;
      for (int64_t j = 0; j < cols; ++j)
        prediction += row[j] * w[j % kWeights];
      const float error = prediction - float(ys[n]);
      loss += double(error) * error;
      for (int64_t j = 0; j < cols; ++j)
        gradient[j % kWeights] += 2 * error * row[j] / float(rows);
    }
    *call.output("loss", {}).as<float>() = rows ? float(loss / double(rows)) : 0.f;
    float* out = call.update(name == "grad" ? "grad" : "params").as<float>();
    for (int k = 0; k < kWeights; ++k) {
      if (name == "grad") out[k] = gradient[k];
      if (name == "train_step") out[k] = w[k] * 0.999f;
      if (name == "train_step_diverging") out[k] = w[k] - kLearningRate * gradient[k];
    }
  }

 private:
  int rank_;
};

}  // namespace

SYNK_PLUGIN(Toy)
