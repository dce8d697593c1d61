// The runtime's test model: small functions whose results are easy to predict, one per behaviour
// the core tests exercise (every reduce op, updates under slicing, sliceable variables, per-rank
// values for the collectives, planned failures). It computes on the host; on a CUDA rank it
// copies through the rank's stream (device_copy.h), so the same tests run on both backends.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "synk/plugins/sdk/synk_sdk.h"
#include "tests/core/testkit/device_copy.h"

namespace sdk = synk::sdk;
using sdk::DType;

namespace {

class Testkit {
 public:
  static sdk::Spec spec() {
    sdk::Spec spec("testkit");
    spec.variable("s", DType::Float32, {2}).initialValues<float>({1, 1});
    spec.variable("s64", DType::Float64, {2}).initialValues<double>({1, 1});
    spec.variable("v", DType::Float32, {8, 2});
    spec.variable("w", DType::Float32, {3}).initialValues<float>({1, 2, 3}).mirrored();
    spec.variable("acc", DType::Float64, {2}).rankLocal(sdk::Reduction::Sum);
    spec.variable("macc", DType::Float64, {2}).rankLocal(sdk::Reduction::Mean);
    spec.variable("count", DType::Int64, {});
    // A linear model trained with the manual's pattern (lin_grad, all_reduce, lin_apply).
    spec.variable("lin_w", DType::Float64, {2}).initialValues<double>({0.5, -0.25});
    spec.variable("lin_g", DType::Float64, {2});
    for (const auto& [name, dtype] : typedVariables())
      spec.variable(name, dtype, {4});
    // Over a MiB (core/step/call_windows.cc's threshold), and not a power of two.
    spec.variable("big", DType::Float32, {kBigElements});
    spec.variable("big2", DType::Float32, {kBigElements});

    spec.function("mean_dot")
        .input("x", DType::Float32, 2)
        .input("y", DType::Float32, 1)
        .output("z", DType::Float32, 0);
    spec.function("shared_update").input("x", DType::Float32, 2).read("s").update("s");
    spec.function("mean_update").input("x", DType::Float64, 2).read("s64").update("s64");
    spec.function("row_stats")
        .input("x", DType::Float64, 2)
        .output("col_mean", DType::Float64, 1)
        .output("col_sum", DType::Float64, 1)
        .output("col_prod", DType::Float64, 1)
        .output("col_max", DType::Float64, 1)
        .output("col_min", DType::Float64, 1)
        .output("rows", DType::Float64, 2)
        .output("first", DType::Float64, 1)
        .output("n_rows", DType::Int64, 0);
    spec.function("int_total").input("x", DType::Int64, 2).output("total", DType::Int64, 0);
    spec.function("accumulate")
        .input("x", DType::Float64, 2)
        .read("acc")
        .read("macc")
        .update("acc")
        .update("macc");
    spec.function("sliced_sum")
        .read("v")
        .output("col_sum", DType::Float32, 1)
        .output("rows", DType::Float32, 2);
    spec.function("x_plus_v")
        .input("x", DType::Float32, 2)
        .read("v")
        .output("out", DType::Float32, 2);
    spec.function("rank_info")
        .output("rank", DType::Int64, 0)
        .output("max_rank", DType::Int64, 0)
        .output("min_rank", DType::Int64, 0)
        .output("rank_f", DType::Float64, 0);
    spec.function("fail_on_rank")
        .input("x", DType::Float32, 2)
        .input("who", DType::Int32, 0)
        .read("count")
        .update("count")
        .output("z", DType::Float32, 0);
    spec.function("die_on_rank")
        .input("x", DType::Float32, 2)
        .input("who", DType::Int32, 0)
        .input("sig", DType::Int32, 0)
        .output("z", DType::Float32, 0);
    spec.function("hang_on_rank")
        .input("x", DType::Float32, 2)
        .input("who", DType::Int32, 0)
        .output("z", DType::Float32, 0);
    spec.function("noop").input("x", DType::Float32, 2).output("z", DType::Float32, 0);
    // big <- the sum over the ranks of (big + rank + 1): an in-call all-reduce of the update;
    // `first`: the rank's big[0] before the sum.
    spec.function("sum_in_update").read("big").update("big").output("first", DType::Float32, 0);
    // Breaks the ABI's rule on purpose: all-reduces its read of big (const) in place, in a call
    // whose update (big2) makes it a call with windows.
    spec.function("reduce_read_in_place")
        .read("big")
        .update("big2")
        .output("first", DType::Float32, 0);
    // Two updates in one call: big as sum_in_update, big2 over its first kHeadElements only (the
    // rest: big2 + rank + 1), so the ranks' all-reduces match where their big2 differs in size.
    spec.function("sum_pair_in_update")
        .read("big")
        .read("big2")
        .update("big")
        .update("big2")
        .output("first", DType::Float32, 0);
    spec.function("slow_on_rank")  // rank `who` works `ms` milliseconds (a straggler)
        .input("x", DType::Float32, 2)
        .input("who", DType::Int32, 0)
        .input("ms", DType::Int32, 0)
        .output("z", DType::Float32, 0);
    auto& fill = spec.function("fill_ranked");
    for (const auto& [name, dtype] : typedVariables())
      fill.update(name);
    spec.function("rank_shaped").output("out", DType::Float32, 1);
    spec.function("forgets_output").input("x", DType::Float32, 2).output("z", DType::Float32, 0);
    spec.function("set_ranked").input("x", DType::Float32, 2).update("s");
    spec.function("pair_sum")
        .input("a", DType::Float32, 2)
        .input("b", DType::Float32, 2)
        .output("out", DType::Float32, 2);
    spec.function("update_mirrored").update("w");
    // Produces both outputs whatever the call wants ("ranked" has rank + 1 elements).
    spec.function("ranked_pair")
        .output("same", DType::Float64, 0)
        .output("ranked", DType::Float32, 1);
    spec.function("lin_grad")
        .input("x", DType::Float64, 2)
        .input("y", DType::Float64, 1)
        .read("lin_w")
        .update("lin_g");
    spec.function("lin_apply")
        .input("lr", DType::Float64, 0)
        .read("lin_w")
        .read("lin_g")
        .update("lin_w");
    return spec;
  }

  explicit Testkit(const sdk::Context& context) : context_(context) {}

  void call(std::string_view name, sdk::Call& call) {
    if (name == "mean_dot") return meanDot(call);
    if (name == "shared_update") return sharedUpdate(call);
    if (name == "mean_update") return meanUpdate(call);
    if (name == "row_stats") return rowStats(call);
    if (name == "int_total") return intTotal(call);
    if (name == "accumulate") return accumulate(call);
    if (name == "sliced_sum") return slicedSum(call);
    if (name == "x_plus_v") return xPlusV(call);
    if (name == "rank_info") return rankInfo(call);
    if (name == "fail_on_rank") return failOnRank(call);
    if (name == "die_on_rank") return dieOnRank(call);
    if (name == "hang_on_rank") return hangOnRank(call);
    if (name == "slow_on_rank") {
      if (context_.rank() == who(call)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(fetch<int32_t>(call.input(2)).at(0)));
      }
      return emit<float>(call, 0, {}, {1.0f});
    }
    if (name == "noop") {  // 0.0f: all bits zero
      const sdk::Tensor z = call.output(0, {});
      return testkit::zero(context_, z.data(), z.bytes());
    }
    if (name == "fill_ranked") return fillRanked(call);
    if (name == "sum_in_update") return sumInUpdate(call, 0, -1);
    if (name == "reduce_read_in_place") {
      emit<float>(call, 0, {}, {0.0f});
      auto* read = const_cast<void*>(call.read(0).data());
      context_.allReduce(read, 1, DType::Float32, sdk::ReduceOp::Sum);
      return;
    }
    if (name == "sum_pair_in_update") {
      sumInUpdate(call, 1, kHeadElements);
      return sumInUpdate(call, 0, -1);
    }
    if (name == "rank_shaped") {
      return emit<float>(call, 0, {context_.rank() + 1},
                         std::vector<float>(context_.rank() + 1, 1));
    }
    if (name == "forgets_output") return;
    if (name == "set_ranked") {
      const float r = static_cast<float>(context_.rank());
      return store<float>(call.update(0), {r, r});
    }
    if (name == "pair_sum") return pairSum(call);
    if (name == "update_mirrored") return store<float>(call.update(0), {0, 0, 0});
    if (name == "lin_grad") return linGrad(call);
    if (name == "ranked_pair") {
      emit<double>(call, 0, {}, {1.0});
      return emit<float>(call, 1, {context_.rank() + 1}, std::vector<float>(context_.rank() + 1));
    }
    if (name == "lin_apply") return linApply(call);
    throw sdk::Error(sdk::Status::InvalidArgument, "testkit has no function " + std::string(name));
  }

 public:
  static constexpr int64_t kBigElements = (int64_t{1} << 18) + 64;
  static constexpr int64_t kHeadElements = 1024;

 private:
  // Read and update `index`; all-reduces the first `head` elements (< 0: all of them).
  void sumInUpdate(sdk::Call& call, int index, int64_t head) {
    std::vector<float> next = fetch<float>(call.read(index));
    for (float& x : next)
      x += static_cast<float>(context_.rank() + 1);
    const sdk::Tensor update = call.update(index);
    store<float>(update, next);
    if (index == 0) emit<float>(call, 0, {}, {next.empty() ? 0.0f : next[0]});
    const size_t count = head < 0 ? next.size() : std::min(next.size(), static_cast<size_t>(head));
    context_.allReduce(update.data(), count, DType::Float32, sdk::ReduceOp::Sum);
  }

  static std::vector<std::pair<std::string, DType>> typedVariables() {
    return {{"var_f32", DType::Float32},  {"var_f64", DType::Float64}, {"var_i32", DType::Int32},
            {"var_i64", DType::Int64},    {"var_u8", DType::UInt8},    {"var_f16", DType::Float16},
            {"var_bf16", DType::BFloat16}};
  }

  template <typename T>
  std::vector<T> fetch(const sdk::ConstTensor& t) const {
    std::vector<T> values(static_cast<size_t>(t.size()));
    testkit::toHost(context_, values.data(), t.data(), t.bytes());
    return values;
  }
  template <typename T>
  void store(const sdk::Tensor& t, const std::vector<T>& values) const {
    testkit::toDevice(context_, t.data(), values.data(), t.bytes());
  }
  template <typename T>
  void emit(sdk::Call& call, int index, sdk::Shape shape, const std::vector<T>& values) const {
    store(call.output(index, std::move(shape)), values);
  }

  void meanDot(sdk::Call& call) {
    const auto x = fetch<float>(call.input(0));
    const auto y = fetch<float>(call.input(1));
    const int64_t rows = call.input(0).dim(0), cols = call.input(0).dim(1);
    double total = 0;
    for (int64_t i = 0; i < rows; ++i) {
      double dot = 0;
      for (int64_t j = 0; j < cols; ++j)
        dot += double(x[i * cols + j]) * y[j];
      total += dot;
    }
    emit<float>(call, 0, {}, {static_cast<float>(total / double(rows))});
  }

  void sharedUpdate(sdk::Call& call) {
    const auto x = fetch<float>(call.input(0));
    const auto s = fetch<float>(call.read(0));
    const int64_t rows = call.input(0).dim(0), cols = call.input(0).dim(1);
    std::vector<float> next(s.size(), 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        next[j] += x[i * cols + j] * s[j];
    }
    store(call.update(0), next);
  }

  void meanUpdate(sdk::Call& call) {
    const auto x = fetch<double>(call.input(0));
    const auto s = fetch<double>(call.read(0));
    const int64_t rows = call.input(0).dim(0), cols = call.input(0).dim(1);
    std::vector<double> next(s.size(), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        next[j] += x[i * cols + j] * s[j] / double(rows);
    }
    store(call.update(0), next);
  }

  void rowStats(sdk::Call& call) {
    const auto x = fetch<double>(call.input(0));
    const int64_t rows = call.input(0).dim(0), cols = call.input(0).dim(1);
    std::vector<double> mean(cols, 0), sum(cols, 0), prod(cols, 1), max(cols, -1e300),
        min(cols, 1e300);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const double e = x[i * cols + j];
        sum[j] += e;
        prod[j] *= e;
        max[j] = std::max(max[j], e);
        min[j] = std::min(min[j], e);
      }
    }
    for (int64_t j = 0; j < cols; ++j)
      mean[j] = sum[j] / double(rows);
    // Only what the call wants (output_subset): the runtime must not ask for the rest.
    if (call.wants(0)) emit(call, 0, {cols}, mean);
    if (call.wants(1)) emit(call, 1, {cols}, sum);
    if (call.wants(2)) emit(call, 2, {cols}, prod);
    if (call.wants(3)) emit(call, 3, {cols}, max);
    if (call.wants(4)) emit(call, 4, {cols}, min);
    if (call.wants(5)) emit(call, 5, {rows, cols}, x);
    // The first row; on a rank without rows there is none: NaN, like the mean of nothing.
    if (call.wants(6)) {
      emit(call, 6, {cols}, rows ? std::vector<double>(x.begin(), x.begin() + cols) : mean);
    }
    if (call.wants(7)) emit<int64_t>(call, 7, {}, {rows});
  }

  void intTotal(sdk::Call& call) {
    const auto x = fetch<int64_t>(call.input(0));
    int64_t total = 0;
    for (int64_t e : x)
      total += e;
    emit<int64_t>(call, 0, {}, {total});
  }

  void accumulate(sdk::Call& call) {
    const auto x = fetch<double>(call.input(0));
    const int64_t rows = call.input(0).dim(0), cols = call.input(0).dim(1);
    for (int k = 0; k < 2; ++k) {
      auto next = fetch<double>(call.read(k));
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j)
          next[j] += x[i * cols + j];
      }
      store(call.update(k), next);
    }
  }

  void slicedSum(sdk::Call& call) {
    const auto v = fetch<float>(call.read(0));
    const int64_t rows = call.read(0).dim(0), cols = call.read(0).dim(1);
    std::vector<float> sum(cols, 0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j)
        sum[j] += v[i * cols + j];
    }
    emit(call, 0, {cols}, sum);
    emit(call, 1, {rows, cols}, v);
  }

  void xPlusV(sdk::Call& call) {
    const auto x = fetch<float>(call.input(0));
    const auto v = fetch<float>(call.read(0));
    if (x.size() != v.size()) {
      throw sdk::Error(sdk::Status::InvalidArgument, "x and v rows differ");
    }
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      out[i] = x[i] + v[i];
    emit(call, 0, call.input(0).shape(), out);
  }

  void pairSum(sdk::Call& call) {
    const auto a = fetch<float>(call.input(0));
    const auto b = fetch<float>(call.input(1));
    std::vector<float> out(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      out[i] = a[i] + b.at(i);
    emit(call, 0, call.input(0).shape(), out);
  }

  void rankInfo(sdk::Call& call) {
    const int64_t r = context_.rank();
    emit<int64_t>(call, 0, {}, {r});
    emit<int64_t>(call, 1, {}, {r});
    emit<int64_t>(call, 2, {}, {r});
    emit<double>(call, 3, {}, {double(r)});
  }

  // The gradient of the squared error 0.5 * (x . w - y)^2 summed over this rank's rows (zero
  // rows: zero), so that the sum over ranks is the whole batch's gradient.
  void linGrad(sdk::Call& call) {
    const auto x = fetch<double>(call.input(0));
    const auto y = fetch<double>(call.input(1));
    const auto w = fetch<double>(call.read(0));
    std::vector<double> g(2, 0.0);
    for (int64_t i = 0; i < call.input(0).dim(0); ++i) {
      const double err = x[2 * i] * w[0] + x[2 * i + 1] * w[1] - y[i];
      g[0] += err * x[2 * i];
      g[1] += err * x[2 * i + 1];
    }
    store(call.update(0), g);
  }

  void linApply(sdk::Call& call) {
    const double lr = fetch<double>(call.input(0)).at(0);
    auto w = fetch<double>(call.read(0));
    const auto g = fetch<double>(call.read(1));
    for (size_t j = 0; j < w.size(); ++j)
      w[j] -= lr * g[j];
    store(call.update(0), w);
  }

  int32_t who(sdk::Call& call) const { return fetch<int32_t>(call.input(1)).at(0); }

  void failOnRank(sdk::Call& call) {
    const auto count = fetch<int64_t>(call.read(0));
    store<int64_t>(call.update(0), {count.at(0) + 1});
    if (context_.rank() == who(call)) {
      throw std::runtime_error("planned failure on rank " + std::to_string(context_.rank()));
    }
    emit<float>(call, 0, {}, {1.0f});
  }

  void dieOnRank(sdk::Call& call) {
    if (context_.rank() == who(call)) raise(fetch<int32_t>(call.input(2)).at(0));
    emit<float>(call, 0, {}, {1.0f});
  }

  void hangOnRank(sdk::Call& call) {
    // Busy in "compute" for good: only the runtime's deadline can end this call.
    while (context_.rank() == who(call))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    emit<float>(call, 0, {}, {1.0f});
  }

  void fillRanked(sdk::Call& call) {
    const double base = context_.rank() + 1;
    for (int u = 0; u < 7; ++u) {
      sdk::Tensor t = call.update(u);
      std::vector<double> values;
      for (int64_t i = 0; i < t.size(); ++i)
        values.push_back(base * double(i + 1));
      switch (t.dtype()) {
        case DType::Float32:
          store(t, convert<float>(values));
          break;
        case DType::Float64:
          store(t, values);
          break;
        case DType::Int32:
          store(t, convert<int32_t>(values));
          break;
        case DType::Int64:
          store(t, convert<int64_t>(values));
          break;
        case DType::UInt8:
          store(t, convert<uint8_t>(values));
          break;
        case DType::Float16: {
          std::vector<sdk::Half> h;
          for (double e : values)
            h.push_back(sdk::toHalf(static_cast<float>(e)));
          store(t, h);
          break;
        }
        case DType::BFloat16: {
          std::vector<sdk::BFloat16> b;
          for (double e : values)
            b.push_back(sdk::toBFloat16(static_cast<float>(e)));
          store(t, b);
          break;
        }
      }
    }
  }

  template <typename T>
  static std::vector<T> convert(const std::vector<double>& values) {
    return std::vector<T>(values.begin(), values.end());
  }

  sdk::Context context_;
};

}  // namespace

SYNK_PLUGIN(Testkit)
