// Model "sdk_probe": exercises the C++ SDK (compiled as C++17, the SDK's floor): fluent and
// aggregate declarations, float16 storage, calls dispatched by name, every way a call can fail.
#include <stdexcept>
#include <string>
#include <string_view>

#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class Probe {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("sdk_probe");
    // Fluent declarations.
    spec.variable("scale", DType::Float64, {}).initialValues<double>({2.0}).mirrored();
    spec.variable("steps", DType::Int64, {}).rankLocal(sdk::Reduction::Sum);
    spec.function("scale_rows")
        .input("x", DType::Float32, 2)
        .input("bias", DType::Float32, 1)
        .read("scale")
        .read("steps")
        .update("steps")
        .output("y", DType::Float32, 2)
        .output("rows", DType::Int64, 0);
    // Aggregate declarations (positional: C++17 has no designated initialisers).
    spec.add(sdk::Variable{"halves",
                           DType::Float16,
                           {2},
                           sdk::bytesOf<sdk::Half>({sdk::toHalf(0.5f), sdk::toHalf(-2.0f)}),
                           sdk::VariableKind::RankLocal,
                           sdk::Reduction::Mean});
    spec.add(sdk::Function{"half_sum", {}, {{"total", DType::Float32, 0}}, {"halves"}, {}});
    // Failure modes.
    spec.function("boom");
    spec.function("boom_unknown");
    spec.function("unsupported");
    spec.function("skip_output").output("y", DType::Float32, 1);
    spec.function("wrong_type").input("x", DType::Float32, 1);
    spec.function("bad_shape").output("y", DType::Float32, 1);
    spec.function("twice").output("y", DType::Float32, 1);
    // Host services.
    spec.function("log_and_alloc");
    spec.function("leak");
    return spec;
  }

  explicit Probe(const sdk::Context& context) : context_(context) {
    if (context.rank() == 13) throw std::runtime_error("probe refuses rank 13");
  }

  void call(std::string_view function, sdk::Call& call) {
    if (function == "scale_rows") return scaleRows(call);
    if (function == "half_sum") return halfSum(call);
    if (function == "boom") throw std::runtime_error("kaboom");
    if (function == "boom_unknown") throw 42;
    if (function == "unsupported") {
      throw sdk::Error(sdk::Status::Unsupported, "probe cannot do that on " + deviceName());
    }
    if (function == "skip_output") return;
    if (function == "wrong_type") {
      call.input("x").as<double>();
      return;
    }
    if (function == "bad_shape") {
      call.output("y", {2, 2});
      return;
    }
    if (function == "twice") {
      call.output("y", {1});
      call.output("y", {2});
      return;
    }
    if (function == "log_and_alloc") {
      void* scratch = context_.allocate(1024);
      context_.log(sdk::LogLevel::Warning, "probe allocated 1024 bytes on rank " +
                                               std::to_string(context_.rank()) + " of " +
                                               std::to_string(context_.nRanks()));
      context_.release(scratch);
      return;
    }
    if (function == "leak") {
      context_.allocate(64);
      return;
    }
    throw std::logic_error("probe has no function " + std::string(function));
  }

 private:
  std::string deviceName() const {
    return context_.device() == sdk::DeviceKind::Host ? "host" : "cuda";
  }

  // y = x * scale + bias (row-wise), rows = number of rows, steps += rows.
  static void scaleRows(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    const sdk::ConstTensor bias = call.input(1);
    const double scale = *call.read("scale").as<double>();
    const int64_t rows = x.dim(0);
    const int64_t cols = x.dim(1);
    if (bias.dim(0) != cols) throw sdk::Error(sdk::Status::InvalidArgument, "bias/x mismatch");
    float* y = call.output(0, {rows, cols}).as<float>();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        y[i * cols + j] =
            static_cast<float>(x.as<float>()[i * cols + j] * scale) + bias.as<float>()[j];
      }
    }
    *call.output("rows", {}).as<int64_t>() = rows;
    *call.update("steps").as<int64_t>() = *call.read(1).as<int64_t>() + rows;
  }

  static void halfSum(sdk::Call& call) {
    const sdk::ConstTensor halves = call.read("halves");
    float total = 0;
    for (int64_t i = 0; i < halves.size(); ++i)
      total += sdk::toFloat(halves.as<sdk::Half>()[i]);
    *call.output("total", {}).as<float>() = total;
  }

  sdk::Context context_;
};

}  // namespace

SYNK_PLUGIN(Probe)
