// Model "handled": functions bound to member functions with sdk::Handlers and outputs with
// declared shapes. Variants (compile definitions) make the author's mistakes the SDK must catch
// when the model is loaded: SYNK_TEST_MISSING (a declared function without a handler),
// SYNK_TEST_EXTRA (a handler for an undeclared function), SYNK_TEST_BAD_DIM (an output dimension
// below kAnySize).
//   double(x: float32 (n, 3)) -> y: float32 (kAnySize, 3) = 2x
//   total(x: float32 (n, 3)) -> s: float32 () = sum of x
//   wrong(x) allocates y with 4 columns: refused at the call (declared (kAnySize, 3)).
#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class Handled {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("handled");
    spec.function("double")
        .input("x", DType::Float32, 2)
        .output("y", DType::Float32, {sdk::kAnySize, 3});
    spec.function("total").input("x", DType::Float32, 2).output("s", DType::Float32, sdk::Shape{});
    spec.function("wrong")
        .input("x", DType::Float32, 2)
        .output("y", DType::Float32, {sdk::kAnySize, 3});
#ifdef SYNK_TEST_BAD_DIM
    spec.function("bad").output("y", DType::Float32, {-2, 3});
#endif
    return spec;
  }

  static sdk::Handlers<Handled> handlers() {
    sdk::Handlers<Handled> h;
    h.on("double", &Handled::twice).on("wrong", &Handled::wrong);
#ifndef SYNK_TEST_MISSING
    h.on("total", &Handled::total);
#endif
#ifdef SYNK_TEST_EXTRA
    h.on("ghost", &Handled::total);
#endif
#ifdef SYNK_TEST_BAD_DIM
    h.on("bad", &Handled::total);
#endif
    return h;
  }

  explicit Handled(const sdk::Context&) {}

 private:
  void twice(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    float* y = call.output("y", {x.dim(0), 3}).as<float>();
    for (int64_t i = 0; i < x.size(); ++i)
      y[i] = 2 * x.as<float>()[i];
  }
  void total(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    float sum = 0;
    for (int64_t i = 0; i < x.size(); ++i)
      sum += x.as<float>()[i];
    *call.output("s", {}).as<float>() = sum;
  }
  void wrong(sdk::Call& call) {
    call.output("y", {call.input("x").dim(0), 4});
  }
};

}  // namespace

SYNK_PLUGIN(Handled)
