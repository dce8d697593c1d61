// Model "sized": a model whose declarations depend on its load options (sdk::Options), compiled
// as C++17. Options: width (int, 3) = length of v; scale (double, 0.5) = v's initial value;
// mode (sum | max); widths (int list, "4,2") = the values of variable `widths`; flag (bool);
// later (string, declared in spec but read only by the constructor).
// Function "echo" (no inputs) -> settings: int64 (4,) = [mode is max, flag, length of later,
// rank], all read in the constructor through context.options().
#include <cstring>
#include <string>
#include <vector>

#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class Sized {
 public:
  static sdk::Spec spec(const sdk::Options& options) {
    const int64_t width = options.getInt("width", 3, "length of v");
    const double scale = options.getDouble("scale", 0.5);
    options.getChoice("mode", "sum", {"sum", "max"});
    const std::vector<int64_t> widths = options.getIntList("widths", {4, 2});
    options.getBool("flag", false);
    options.declare("later", "x", "read by the constructor only");
    sdk::Spec spec("sized");
    sdk::Variable& v = spec.variable("v", DType::Float32, {width});
    v.initial.resize(static_cast<size_t>(width) * sizeof(float));
    for (int64_t i = 0; i < width; ++i) {
      const auto value = static_cast<float>(scale);
      std::memcpy(v.initial.data() + i * sizeof(float), &value, sizeof value);
    }
    sdk::Variable& w = spec.variable("widths", DType::Int64, {static_cast<int64_t>(widths.size())});
    w.initial.resize(widths.size() * sizeof(int64_t));
    if (!widths.empty()) std::memcpy(w.initial.data(), widths.data(), w.initial.size());
    spec.function("echo").output("settings", DType::Int64, 1);
    return spec;
  }

  explicit Sized(const sdk::Context& context)
      : max_(context.options().getChoice("mode", "sum", {"sum", "max"}) == "max"),
        flag_(context.options().getBool("flag", false)),
        later_(context.options().getString("later", "x")),
        rank_(context.rank()) {
    if (context.isCuda()) throw sdk::Error(sdk::Status::Unsupported, "sized runs on the host");
  }

  void call(int /*function: echo*/, sdk::Call& call) {
    int64_t* out = call.output("settings", {4}).as<int64_t>();
    out[0] = max_;
    out[1] = flag_;
    out[2] = static_cast<int64_t>(later_.size());
    out[3] = rank_;
  }

 private:
  bool max_;
  bool flag_;
  std::string later_;
  int rank_;
};

}  // namespace

SYNK_PLUGIN(Sized)
