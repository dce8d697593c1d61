// Model "intro": Synkhronos' introductory example, z = T.mean(x.dot(y), axis=0).
// Function "z": x (float32, rows x cols, usually scattered), y (float32, cols, usually
// broadcast) -> z (float32 scalar) = mean over the rows of x . y. The runtime averages the ranks'
// z, which equals the mean over all rows when the rows are split evenly.
#include <string>

#include "synk/plugins/examples/intro/intro_kernels.h"
#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class IntroModel {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("intro");
    spec.function("z")
        .input("x", DType::Float32, 2)
        .input("y", DType::Float32, 1)
        .output("z", DType::Float32, 0);
    return spec;
  }

  explicit IntroModel(const sdk::Context& context) : context_(context) {}

  void call(int /*function: "z" is the only one*/, sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    const sdk::ConstTensor y = call.input("y");
    const int64_t rows = x.dim(0);
    const int64_t cols = x.dim(1);
    if (y.dim(0) != cols) {
      throw sdk::Error(sdk::Status::InvalidArgument, "x has " + std::to_string(cols) +
                                                         " columns but y has " +
                                                         std::to_string(y.dim(0)) + " elements");
    }
    const float* xs = x.as<float>();
    const float* ys = y.as<float>();
    float* z = call.output("z", {}).as<float>();
    if (context_.isCuda()) {
      runOnGpu(xs, ys, z, rows, cols);
      return;
    }
    double sum = 0;
    for (int64_t i = 0; i < rows; ++i) {
      float dot = 0;
      for (int64_t j = 0; j < cols; ++j)
        dot += xs[i * cols + j] * ys[j];
      sum += dot;
    }
    *z = static_cast<float>(sum / static_cast<double>(rows));  // rows == 0: NaN, as numpy
  }

 private:
  void runOnGpu(const float* x, const float* y, float* z, int64_t rows, int64_t cols) const {
    const char* why =
        synk_examples::intro::launchRowDotMean(x, y, z, rows, cols, context_.stream());
    if (why) {
      throw sdk::Error(
          synk_examples::intro::haveCudaKernels() ? sdk::Status::Device : sdk::Status::Unsupported,
          "cannot run on cuda:" + std::to_string(context_.ordinal()) + ": " + why);
    }
  }

  sdk::Context context_;
};

}  // namespace

SYNK_PLUGIN(IntroModel)
