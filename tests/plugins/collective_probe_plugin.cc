// Model "collective_probe" (host device only): functions that all-reduce during a call through
// the host's service (ABI 1.2), for the runtime's tests.
//   total(x: float32 (n,)) -> s: float32 () = the sum over every rank's rows (all_reduce sum)
//   extremes(x: float32 (n,)) -> e: float32 (3,) = [max, min, avg of the ranks' row counts]
//   diverge() -> rank 1 calls all_reduce twice, every other rank once
//   gathered(x: float32 (n,)) -> g: float32 (ranks x most,) = every rank's rows padded with -1 to
//       the largest share (from the call's rank_rows, ABI 1.4), all-gathered; a local call,
//       which has no rank_rows, gathers over itself
// Its constructor tries an all_reduce (refused outside a call) when loaded with early=true.
#include <algorithm>
#include <limits>
#include <vector>

#include "synk/plugins/sdk/synk_sdk.h"

namespace {

namespace sdk = synk::sdk;
using sdk::DType;

class CollectiveProbe {
 public:
  static sdk::Spec spec(const sdk::Options& options) {
    options.getBool("early", false);
    sdk::Spec spec("collective_probe");
    spec.function("total").input("x", DType::Float32, 1).output("s", DType::Float32, sdk::Shape{});
    spec.function("extremes")
        .input("x", DType::Float32, 1)
        .output("e", DType::Float32, sdk::Shape{3});
    spec.function("diverge").output("n", DType::Float32, sdk::Shape{});
    spec.function("gathered")
        .input("x", DType::Float32, 1)
        .output("g", DType::Float32, sdk::Shape{sdk::kAnySize});
    return spec;
  }
  static sdk::Handlers<CollectiveProbe> handlers() {
    return sdk::Handlers<CollectiveProbe>()
        .on("total", &CollectiveProbe::total)
        .on("extremes", &CollectiveProbe::extremes)
        .on("diverge", &CollectiveProbe::diverge)
        .on("gathered", &CollectiveProbe::gathered);
  }

  explicit CollectiveProbe(const sdk::Context& context) : context_(context) {
    if (context.isCuda()) throw sdk::Error(sdk::Status::Unsupported, "host device only");
    if (context.options().getBool("early", false)) {
      float x = 1;
      context.allReduce(&x, 1, DType::Float32, sdk::ReduceOp::Sum);
    }
  }

 private:
  void total(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    float* s = call.output("s", {}).as<float>();
    *s = 0;
    for (int64_t i = 0; i < x.dim(0); ++i)
      *s += x.as<float>()[i];
    context_.allReduce(s, 1, DType::Float32, sdk::ReduceOp::Sum);
  }
  void extremes(sdk::Call& call) {
    const auto rows = static_cast<float>(call.input("x").dim(0));
    float* e = call.output("e", {3}).as<float>();
    e[0] = e[1] = e[2] = rows;
    context_.allReduce(e, 1, DType::Float32, sdk::ReduceOp::Max);
    context_.allReduce(e + 1, 1, DType::Float32, sdk::ReduceOp::Min);
    context_.allReduce(e + 2, 1, DType::Float32, sdk::ReduceOp::Avg);
  }
  void diverge(sdk::Call& call) {
    float* n = call.output("n", {}).as<float>();
    *n = 1;
    for (int k = 0; k < (context_.rank() == 1 ? 2 : 1); ++k)
      context_.allReduce(n, 1, DType::Float32, sdk::ReduceOp::Sum);
  }

  void gathered(sdk::Call& call) {
    const sdk::ConstTensor x = call.input("x");
    std::vector<int64_t> rows = call.rankRows();
    if (rows.empty()) rows = {x.dim(0)};  // a local call: the master alone
    const int64_t mine = rows.size() == 1 ? 0 : context_.rank();
    if (rows[mine] != x.dim(0)) {
      throw sdk::Error(sdk::Status::InvalidArgument, "rank_rows disagrees with the share");
    }
    const int64_t most = *std::max_element(rows.begin(), rows.end());
    std::vector<float> part(static_cast<size_t>(most), -1.0f);
    std::copy(x.as<float>(), x.as<float>() + x.dim(0), part.begin());
    const auto count = static_cast<int64_t>(rows.size()) * most;
    float* g = call.output("g", {count}).as<float>();
    context_.allGather(part.data(), g, static_cast<size_t>(most), DType::Float32);
  }

  sdk::Context context_;
};

}  // namespace

SYNK_PLUGIN(CollectiveProbe)
