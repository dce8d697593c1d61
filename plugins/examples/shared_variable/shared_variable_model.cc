// Model "shared_variable": Synkhronos' shared-variable example.
// Variable s: float32, shape (2,), initial [1, 1]. Function "f": input x (float32, rows x 2),
// reads s, updates s with s_new[j] = sum over rows i of x[i, j] * s[j]. Each rank computes its
// own s from its slice (s is plain): with x = [[1, 1], [2, 2], [3, 3], [4, 4]] on two ranks, rank
// 0 gets [3, 3] and rank 1 [7, 7]; a sum reduction of s then gives the serial [10, 10].
#include <string>

#include "synk/plugins/examples/shared_variable/shared_variable_kernels.h"
#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class SharedVariableModel {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("shared_variable");
    spec.variable("s", DType::Float32, {2}).initialValues<float>({1, 1});
    spec.function("f").input("x", DType::Float32, 2).read("s").update("s");
    return spec;
  }

  explicit SharedVariableModel(const sdk::Context& context) : context_(context) {}

  void call(int /*function: "f" is the only one*/, sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    const sdk::ConstTensor s = call.read("s");
    const sdk::Tensor s_new = call.update("s");
    const int64_t rows = x.dim(0);
    const int64_t cols = x.dim(1);
    if (s.ndim() != 1 || s.dim(0) != cols || s_new.shape() != s.shape()) {
      throw sdk::Error(sdk::Status::InvalidArgument,
                       "x has " + std::to_string(cols) + " columns but s has shape " +
                           sdk::shapeString(s.shape().data(), s.ndim()));
    }
    if (context_.isCuda()) {
      runOnGpu(x.as<float>(), s.as<float>(), s_new.as<float>(), rows, cols);
      return;
    }
    const float* xs = x.as<float>();
    const float* old = s.as<float>();
    float* out = s_new.as<float>();
    for (int64_t j = 0; j < cols; ++j) {
      float sum = 0;
      for (int64_t i = 0; i < rows; ++i)
        sum += xs[i * cols + j] * old[j];
      out[j] = sum;
    }
  }

 private:
  void runOnGpu(const float* x, const float* s, float* s_new, int64_t rows, int64_t cols) const {
    const char* why = synk_examples::shared_variable::launchColumnUpdate(x, s, s_new, rows, cols,
                                                                         context_.stream());
    if (why) {
      throw sdk::Error(synk_examples::shared_variable::haveCudaKernels() ? sdk::Status::Device
                                                                         : sdk::Status::Unsupported,
                       "cannot run on cuda:" + std::to_string(context_.ordinal()) + ": " + why);
    }
  }

  sdk::Context context_;
};

}  // namespace

SYNK_PLUGIN(SharedVariableModel)
