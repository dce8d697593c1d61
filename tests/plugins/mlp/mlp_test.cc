// The mlp model in sessions on the test backend (cpu here; the _cuda variant on a GPU): its
// declarations and options, its gradient and loss against a double-precision reference, the fused
// train_step against grad + update, every GEMM path and the sgd step inside the GEMMs against the
// plain step, N ranks against the one-process run (uneven shares), bucketed all-reduce against
// one all-reduce, rank-local metrics, bad labels, every update rule.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "synk/collectives/registry.h"
#include "tests/plugins/mlp/mlp_reference.h"
#include "tests/support/session_fixture.h"

namespace synk {
namespace {

using mlp_test::makeSamples;
using mlp_test::Reference;

const ModelOptions kSmall = {{"inputs", "6"}, {"widths", "5,4"}, {"classes", "3"}, {"seed", "3"}};
const Reference kReference{{6, 5, 4, 3}};

ModelOptions with(ModelOptions options, const ModelOptions& more) {
  for (const auto& [key, value] : more)
    options[key] = value;
  return options;
}

// The rank counts a case runs: every one on cpu; on cuda one per process (a process that
// initialised CUDA forks once), the largest the GPUs here hold (else the smallest: it skips).
std::vector<int> rankCounts(std::vector<int> counts) {
  if (test::testBackend() == "cpu") return counts;
  BackendRegistry registry = makeDefaultRegistry();
  BackendFactory* factory = registry.find(test::testBackend());
  const int devices = factory ? factory->deviceCount() : 0;
  int best = counts.front();
  for (int n : counts)
    best = n <= devices ? std::max(best, n) : best;
  return {best};
}

std::string mlpFile() {
  return test::pluginFile("synk_mlp");
}

std::vector<float> params(const Model& model) {
  return model.variable("params").getValue().toVector<float>();
}

void requireClose(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::fabs(double(got[i]) - want[i]) <= tolerance * (1 + std::fabs(want[i])));
  }
}

// kSmall's data by default (6 features, 3 classes).
struct Batches {
  int64_t features;
  mlp_test::Samples samples;
  Data x, y;
  Batches(Session& session, int64_t rows, unsigned seed, int64_t features_ = 6, int32_t classes = 3)
      : features(features_),
        samples(makeSamples(rows, features, classes, seed)),
        x(session.data(Array::of<float>({rows, features}, samples.x))),
        y(session.data(Array::vector<int32_t>(samples.y))) {}
  Array xs(int64_t begin, int64_t end) const {
    return Array::of<float>({end - begin, features},
                            std::vector<float>(samples.x.begin() + begin * features,
                                               samples.x.begin() + end * features));
  }
  Array ys(int64_t begin, int64_t end) const {
    return Array::vector<int32_t>(
        std::vector<int32_t>(samples.y.begin() + begin, samples.y.begin() + end));
  }
};

TEST_CASE("the mlp declares its variables, functions and options", "[plugins]") {
  Session session = test::forkForTest(1);
  Model model = session.load(mlpFile(), with(kSmall, {{"optimizer", "adam"}}));
  const int64_t n = 7 * 5 + 6 * 4 + 5 * 3;
  std::vector<std::string> names;
  for (const VariableSpec& v : model.spec().variables)
    names.push_back(v.name);
  CHECK(names ==
        std::vector<std::string>{"params", "grad", "opt_m", "opt_v", "opt_step", "metrics"});
  CHECK(model.variable("params").shape() == Shape{n});
  CHECK(model.variable("metrics").kind() == VariableKind::RankLocal);
  // nn.Linear's initialisation: every block within 1/sqrt(fan_in), none all zero.
  const std::vector<float> p = params(model);
  for (size_t l = 0; l < 3; ++l) {
    const float bound = 1.0f / std::sqrt(float(kReference.dims[l]));
    double sum_sq = 0;
    for (int64_t i = kReference.offset(l); i < kReference.offset(l + 1); ++i) {
      REQUIRE(std::fabs(p[i]) <= bound);
      sum_sq += double(p[i]) * p[i];
    }
    CHECK(sum_sq > 0);
  }
  CHECK_THROWS_WITH(
      session.load(mlpFile(), {{"depth", "2"}}),
      Catch::EndsWith("model 'mlp' has no option 'depth' (valid options: inputs, "
                      "widths, classes, precision, optimizer, lr, momentum, eps, "
                      "seed, bucket_bytes, grad_reduce, cuda_graph, gemm, fuse_update, "
                      "exchange)"));
  CHECK_THROWS_WITH(
      session.load(mlpFile(), {{"precision", "fp16"}}),
      Catch::Contains("option 'precision' is 'fp16'; choose one of fp32, tf32, bf16"));
  CHECK_THROWS_WITH(
      session.load(mlpFile(), {{"exchange", "both"}}),
      Catch::Contains("option 'exchange' is 'both'; choose one of auto, gradient, rows"));
  CHECK_THROWS_WITH(session.load(mlpFile(), {{"widths", "64,0"}}),
                    Catch::Contains("option 'widths' has a width 0; widths are positive"));
}

TEST_CASE("grad and loss match a double-precision reference, on uneven shares and in slices",
          "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({1, 2, 3})));
  INFO(ranks << " ranks");
  Session session = test::forkForTest(ranks);
  Model model = session.load(mlpFile(), kSmall);
  Batches data(session, 10, 1);  // 3 ranks: 4, 3, 3 rows
  std::vector<double> want;
  const double loss =
      kReference.lossAndGradient(params(model), data.samples.x, data.samples.y, &want);
  session.function(model, "grad")({data.x, data.y});
  const std::vector<float> got = model.variable("grad").getValue().toVector<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("gradient element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(1e-5).epsilon(1e-4));
  }
  // Every rank holds the same gradient (it was all-reduced inside the call).
  for (int r = 0; r < ranks; ++r)
    CHECK(session.getValue(r, {model.variable("grad")}).at(0).toVector<float>() == got);
  Function f = session.function(model, "loss");
  for (int slices : {1, 3}) {
    const std::vector<Array> out = f({data.x, data.y}, {.num_slices = slices});
    CHECK(out.at(0).as<float>()[0] == Approx(loss).epsilon(1e-5));
    CHECK(out.at(1).as<float>()[0] >= 0.0f);
  }
}

// Model A trains on every rank; model B, loaded with the same options, trains by asLocal (the
// master alone, whole batches: the one-process run).
TEST_CASE("train_step on 1, 2, 3 ranks gives the one-process parameters (uneven shares)",
          "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({1, 2, 3})));
  INFO(ranks << " ranks");
  Session session = test::forkForTest(ranks);
  Batches data(session, 50, 2);
  for (const std::string optimizer : {"sgd", "adam"}) {
    INFO(optimizer);
    const ModelOptions options = with(kSmall, {{"optimizer", optimizer}, {"lr", "0.05"}});
    Model distributed = session.load(mlpFile(), options);
    Model local = session.load(mlpFile(), options);
    Function step = session.function(distributed, "train_step");
    Function reference = session.function(local, "train_step");
    for (int64_t k = 0; k < 5; ++k) {
      const int64_t begin = k * 10, end = begin + 10;  // 10 rows: 4, 3, 3 on 3 ranks
      const float loss =
          step({data.x, data.y}, {.batch = Selection::range(begin, end)}).at(0).as<float>()[0];
      const float loss_local =
          reference.asLocal({data.xs(begin, end), data.ys(begin, end)}).at(0).as<float>()[0];
      CHECK(loss == Approx(loss_local).epsilon(1e-5));
    }
    const std::vector<float> want = params(local);
    const std::vector<float> rank0 = params(distributed);
    requireClose(rank0, want, 1e-5);
    // Every rank applies the same update to the same all-reduced gradient: equal bits.
    for (int r = 1; r < ranks; ++r) {
      INFO("rank " << r);
      CHECK(session.getValue(r, {distributed.variable("params")}).at(0).toVector<float>() == rank0);
    }
  }
}

// A model over a MiB: on NCCL ranks train_step's update buffer is a window (core/step/
// call_windows.cc), all-reduced with NCCL's symmetric kernels and rotated into the parameters;
// after the first three steps every buffer of the rotation is one (where windows are expected,
// the first step's bucket all-reduces ran in it on every rank). The gradient exchange (summed
// SGD shares) as at synk's defaults for large batches.
TEST_CASE(
    "train_step with parameters over a MiB gives the one-process parameters, equal on "
    "every rank",
    "[plugins]") {
  const int ranks = rankCounts({2}).front();
  Session session = test::forkForTest(ranks, {.step_times = true});
  const ModelOptions options = {{"inputs", "512"},       {"widths", "512"}, {"classes", "3"},
                                {"seed", "5"},           {"lr", "0.05"},    {"optimizer", "sgd"},
                                {"exchange", "gradient"}};
  Batches data(session, 40, 9, 512);
  Model distributed = session.load(mlpFile(), options);
  Model local = session.load(mlpFile(), options);
  Function step = session.function(distributed, "train_step");
  Function reference = session.function(local, "train_step");
  for (int64_t k = 0; k < 5; ++k) {
    const int64_t begin = k * 8, end = begin + 8;
    const float loss =
        step({data.x, data.y}, {.batch = Selection::range(begin, end)}).at(0).as<float>()[0];
    // Issued by the plugin: a step replayed from a captured CUDA graph issues none.
    if (k == 0 && test::windowsExpected(ranks)) {
      for (const RankStepTimes& t : session.lastStepTimes()) {
        INFO("rank " << t.rank);
        CHECK(t.window_all_reduces > 0);
      }
    }
    const float loss_local =
        reference.asLocal({data.xs(begin, end), data.ys(begin, end)}).at(0).as<float>()[0];
    CHECK(loss == Approx(loss_local).epsilon(1e-5));
  }
  const std::vector<float> rank0 = params(distributed);
  REQUIRE(rank0.size() * sizeof(float) >= (size_t{1} << 20));
  requireClose(rank0, params(local), 1e-5);
  for (int r = 1; r < ranks; ++r) {
    INFO("rank " << r);
    CHECK(session.getValue(r, {distributed.variable("params")}).at(0).toVector<float>() == rank0);
  }
}

// The rows exchange (exchange = rows): every rank gathers every rank's rows of each layer and
// computes each block's gradient over the whole batch; SGD runs inside those GEMMs. Uneven
// shares (padding), an empty share (1 row on several ranks) and a rule with state.
TEST_CASE(
    "train_step exchanging rows gives the one-process parameters, equal on every rank, "
    "empty shares included",
    "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({2, 3})));
  INFO(ranks << " ranks");
  Session session = test::forkForTest(ranks);
  Batches data(session, 50, 7);
  for (const std::string optimizer : {"sgd", "adam"}) {
    INFO(optimizer);
    const ModelOptions options = with(kSmall, {{"optimizer", optimizer}, {"lr", "0.05"}});
    Model distributed = session.load(mlpFile(), with(options, {{"exchange", "rows"}}));
    // The gradient exchange on the same batches, the empty share included.
    Model by_gradient = session.load(mlpFile(), with(options, {{"exchange", "gradient"}}));
    Model local = session.load(mlpFile(), options);
    Function step = session.function(distributed, "train_step");
    Function step_gradient = session.function(by_gradient, "train_step");
    Function reference = session.function(local, "train_step");
    const std::vector<std::pair<int64_t, int64_t>> batches = {
        {0, 10}, {10, 21}, {21, 22}, {22, 30}, {30, 50}};
    for (const auto& [begin, end] : batches) {
      INFO("rows " << begin << " to " << end);
      const Selection rows = Selection::range(begin, end);
      const float loss = step({data.x, data.y}, {.batch = rows}).at(0).as<float>()[0];
      const float loss_gradient =
          step_gradient({data.x, data.y}, {.batch = rows}).at(0).as<float>()[0];
      const float loss_local =
          reference.asLocal({data.xs(begin, end), data.ys(begin, end)}).at(0).as<float>()[0];
      CHECK(loss == Approx(loss_local).epsilon(1e-5));
      CHECK(loss_gradient == Approx(loss_local).epsilon(1e-5));
    }
    const std::vector<float> rank0 = params(distributed);
    requireClose(rank0, params(local), 1e-5);
    requireClose(params(by_gradient), params(local), 1e-5);
    for (int r = 1; r < ranks; ++r) {
      INFO("rank " << r);
      CHECK(session.getValue(r, {distributed.variable("params")}).at(0).toVector<float>() == rank0);
    }
  }
}

TEST_CASE("train_step equals grad then update, and a graph replay equals eager steps",
          "[plugins]") {
  Session session = test::forkForTest(1);
  const ModelOptions options = with(kSmall, {{"optimizer", "adam"}, {"lr", "0.01"}});
  Model fused = session.load(mlpFile(), options);
  Model eager = session.load(mlpFile(), with(options, {{"cuda_graph", "false"}}));
  Model split = session.load(mlpFile(), options);
  Batches data(session, 16, 3);
  Function step = session.function(fused, "train_step");
  Function step_eager = session.function(eager, "train_step");
  Function grad = session.function(split, "grad");
  Function update = session.function(split, "update");
  for (int k = 0; k < 6; ++k) {
    step({data.x, data.y});
    step_eager({data.x, data.y});
    grad({data.x, data.y});
    update({});
  }
  CHECK(params(fused) == params(split));
  CHECK(params(fused) == params(eager));
  CHECK(fused.variable("opt_step").getValue().as<int64_t>()[0] == 6);
}

// On several GPU ranks the step's NCCL all-reduces are captured in its CUDA graph with the rest
// (bucketed, updates per bucket): replays must give the eager steps' parameters, bit for bit,
// on every rank. On cpu ranks both run eagerly.
TEST_CASE("on several ranks a graph replay, all-reduces included, equals eager steps",
          "[plugins]") {
  const int ranks = rankCounts({2}).front();
  Session session = test::forkForTest(ranks);
  const ModelOptions options = with(kSmall, {{"optimizer", "momentum"},
                                             {"lr", "0.05"},
                                             {"bucket_bytes", "64"},
                                             {"exchange", "gradient"}});
  Batches data(session, 16, 5);
  // The gradient's all-reduce, and the rows exchange with SGD in its GEMMs.
  for (const ModelOptions& variant :
       {options, with(options, {{"exchange", "rows"}, {"optimizer", "sgd"}})}) {
    INFO("exchange " << variant.at("exchange"));
    Model graphed = session.load(mlpFile(), variant);
    Model eager = session.load(mlpFile(), with(variant, {{"cuda_graph", "false"}}));
    Function step = session.function(graphed, "train_step");
    Function step_eager = session.function(eager, "train_step");
    for (int k = 0; k < 6; ++k) {
      const float a = step({data.x, data.y}).at(0).as<float>()[0];
      const float b = step_eager({data.x, data.y}).at(0).as<float>()[0];
      CHECK(a == b);
    }
    const std::vector<float> want = params(eager);
    CHECK(params(graphed) == want);
    for (int r = 1; r < ranks; ++r) {
      INFO("rank " << r);
      CHECK(session.getValue(r, {graphed.variable("params")}).at(0).toVector<float>() == want);
    }
  }
}

// On cuda every GEMM path (cublasGemmEx with epilogue kernels, cuBLASLt with fused epilogues,
// autotuned cuBLASLt) with and without SGD inside the weight-gradient GEMMs; on cpu the host GEMM
// runs for every gemm option, and the fused update is checked all the same. The wide shape has
// aligned widths and a K of 256-512 at 16 rows: on the GPU, shapes where cuBLASLt's heuristic and
// tuning consider split-K algorithms (with beta = 1 in the fused step).
TEST_CASE("every gemm path and the fused sgd update give the plain step's parameters",
          "[plugins]") {
  // Both shapes in one session: a process that initialised CUDA may not fork again, so a
  // GENERATE here would fail its second pass on cuda.
  Session session = test::forkForTest(1);
  for (const bool wide : {false, true}) {
    INFO((wide ? "256-512-384-10" : "6-5-4-3"));
    const ModelOptions shape = wide ? ModelOptions{{"inputs", "256"},
                                                   {"widths", "512,384"},
                                                   {"classes", "10"},
                                                   {"seed", "3"}}
                                    : kSmall;
    const ModelOptions options = with(shape, {{"optimizer", "sgd"}, {"lr", "0.1"}});
    Model plain =
        session.load(mlpFile(), with(options, {{"gemm", "cublas"}, {"fuse_update", "false"}}));
    Batches data(session, 24, 9, wide ? 256 : 6, wide ? 10 : 3);
    Function plain_step = session.function(plain, "train_step");
    std::vector<Model> models;
    std::vector<std::string> names;
    for (const std::string gemm : {"cublas", "lt", "lt_tuned"}) {
      for (const std::string fuse : {"true", "false"}) {
        models.push_back(
            session.load(mlpFile(), with(options, {{"gemm", gemm}, {"fuse_update", fuse}})));
        names.push_back(gemm + (fuse == "true" ? " fused" : ""));
      }
    }
    const std::vector<float> initial = params(plain);
    const std::vector<float> grad_before = models[0].variable("grad").getValue().toVector<float>();
    for (int k = 0; k < 5; ++k) {
      const Selection batch = Selection::range(k % 2 * 8, k % 2 * 8 + 16);
      const float want = plain_step({data.x, data.y}, {.batch = batch}).at(0).as<float>()[0];
      for (size_t v = 0; v < models.size(); ++v) {
        INFO(names[v] << ", step " << k);
        const float loss =
            session.function(models[v], "train_step")({data.x, data.y}, {.batch = batch})
                .at(0)
                .as<float>()[0];
        CHECK(loss == Approx(want).epsilon(1e-5));
      }
    }
    const std::vector<float> want = params(plain);
    CHECK(want != initial);
    for (size_t v = 0; v < models.size(); ++v) {
      INFO(names[v]);
      requireClose(params(models[v]), want, 1e-5);
    }
    // The fused step applies the gradient without storing it: `grad` is grad()'s alone.
    CHECK(models[0].variable("grad").getValue().toVector<float>() == grad_before);
  }
}

// SGD sums every rank's share of the step (rank 0's with the parameters) instead of the
// gradient, then updates nothing: the same buckets, the same parameters as the plain path.
TEST_CASE("a bucketed all-reduce overlapping backward gives the plain step's parameters",
          "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({2, 3})));
  Session session = test::forkForTest(ranks);  // one fork per process on cuda: no GENERATE below
  Batches data(session, 21, 4);
  for (const std::string optimizer : {"momentum", "sgd"}) {
    INFO(ranks << " ranks, " << optimizer);
    const ModelOptions options = with(kSmall, {{"optimizer", optimizer}, {"lr", "0.1"}});
    Model plain = session.load(mlpFile(), options);
    // SGD: the gradient's all-reduce and an update pass, as other rules run.
    Model unfused = session.load(mlpFile(), with(options, {{"fuse_update", "false"}}));
    // 64 bytes: every layer's block is a bucket of its own (3 all-reduces per step). 16 bytes:
    // the first layer's block (140 bytes, 4 buckets' worth) is also written in 4 GEMMs of rows
    // 0, 1-2, 3, 4-5 of W, each all-reduced as it is written (6 all-reduces per step).
    Model bucketed = session.load(mlpFile(), with(options, {{"bucket_bytes", "64"}}));
    Model chunked = session.load(mlpFile(), with(options, {{"bucket_bytes", "16"}}));
    Function a = session.function(plain, "train_step");
    Function b = session.function(bucketed, "train_step");
    Function c = session.function(chunked, "train_step");
    Function u = session.function(unfused, "train_step");
    for (int k = 0; k < 4; ++k) {
      a({data.x, data.y});
      b({data.x, data.y});
      c({data.x, data.y});
      u({data.x, data.y});
    }
    requireClose(params(bucketed), params(plain), 1e-6);
    requireClose(params(chunked), params(plain), 1e-6);
    requireClose(params(unfused), params(plain), 1e-6);
    for (int r = 1; r < ranks; ++r) {  // one all-reduce result: equal bits on every rank
      INFO("rank " << r);
      CHECK(session.getValue(r, {chunked.variable("params")}).at(0).toVector<float>() ==
            params(chunked));
    }
    // grad() runs the same chunked pass.
    Function grad_plain = session.function(plain, "grad");
    Function grad_chunked = session.function(chunked, "grad");
    grad_plain({data.x, data.y});
    grad_chunked({data.x, data.y});
    requireClose(chunked.variable("grad").getValue().toVector<float>(),
                 plain.variable("grad").getValue().toVector<float>(), 1e-6);
  }
}

TEST_CASE("rank-local metrics sum every rank's samples when read", "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({1, 3})));
  Session session = test::forkForTest(ranks);
  Model model = session.load(mlpFile(), kSmall);
  Batches data(session, 10, 5);
  Function step = session.function(model, "train_step");
  double loss_sum = 0;
  for (int k = 0; k < 3; ++k)
    loss_sum += 10.0 * step({data.x, data.y}).at(0).as<float>()[0];
  const std::vector<double> metrics = model.variable("metrics").getValue().toVector<double>();
  CHECK(metrics[0] == Approx(loss_sum).epsilon(1e-5));
  CHECK(metrics[1] >= 0);
  CHECK(metrics[1] <= 30);
  CHECK(metrics[2] == 30);
}

TEST_CASE("a bad label fails the step on every rank and changes nothing", "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({1, 2})));
  Session session = test::forkForTest(ranks);
  Batches data(session, 8, 6);
  for (const std::string exchange : {"gradient", "rows"}) {
    for (const std::string optimizer : {"sgd", "momentum"}) {
      INFO(exchange << ", " << optimizer);
      Model model =
          session.load(mlpFile(), with(kSmall, {{"exchange", exchange}, {"optimizer", optimizer}}));
      data.y.set({7}, 3);  // the last rank's share
      Function step = session.function(model, "train_step");
      const std::vector<float> before = params(model);
      if (test::testBackend() == "cpu") {
        CHECK_THROWS_WITH(step({data.x, data.y}),
                          Catch::Contains("label") && Catch::Contains("outside [0, 3)"));
      } else {  // a kernel cannot throw: the loss is NaN and the step an identity
        CHECK(std::isnan(step({data.x, data.y}).at(0).as<float>()[0]));
      }
      for (int r = 0; r < ranks; ++r)
        CHECK(session.getValue(r, {model.variable("params")}).at(0).toVector<float>() == before);
      data.y.set({7}, 2);
      step({data.x, data.y});
      CHECK(params(model) != before);
    }
  }
}

TEST_CASE("every update rule lowers the loss", "[plugins]") {
  Session session = test::forkForTest(1);
  Batches data(session, 64, 7);
  for (const std::string optimizer :
       {"sgd", "momentum", "nesterov", "adagrad", "rmsprop", "adadelta", "adam", "adamax"}) {
    INFO(optimizer);
    ModelOptions options = with(kSmall, {{"optimizer", optimizer}});
    if (optimizer == "sgd" || optimizer == "momentum" || optimizer == "nesterov") {
      options["lr"] = "0.1";
    } else if (optimizer == "adam" || optimizer == "adamax") {
      options["lr"] = "0.01";
    }
    Model model = session.load(mlpFile(), options);
    Function step = session.function(model, "train_step");
    const float first = step({data.x, data.y}).at(0).as<float>()[0];
    float last = first;
    for (int k = 0; k < 40; ++k)
      last = step({data.x, data.y}).at(0).as<float>()[0];
    CHECK(last < 0.9f * first);
  }
}

}  // namespace
}  // namespace synk

namespace synk {
namespace {

TEST_CASE("device-resident data gives what shared-memory data gives, and follows its changes",
          "[plugins]") {
  const int ranks = GENERATE(from_range(rankCounts({1, 2})));
  Session session = test::forkForTest(ranks);
  Model a = session.load(mlpFile(), with(kSmall, {{"lr", "0.1"}}));
  Model b = session.load(mlpFile(), with(kSmall, {{"lr", "0.1"}}));
  const mlp_test::Samples samples = makeSamples(40, 6, 3, 8);
  const Array xs = Array::of<float>({40, 6}, samples.x), ys = Array::vector<int32_t>(samples.y);
  Data x = session.data(xs), y = session.data(ys);
  Data rx = session.data(xs, {.device_resident = true});
  Data ry = session.data(ys, {.device_resident = true});
  Function step_a = session.function(a, "train_step");
  Function step_b = session.function(b, "train_step");
  const std::vector<Selection> batches = {Selection::indices({3, 17, 5, 39, 0, 22, 8}),
                                          Selection::range(10, 30),
                                          Selection::indices({1, 2, 3, 4, 36, 35, 34, 33})};
  for (const Selection& batch : batches) {
    CHECK(step_a({x, y}, {.batch = batch}).at(0).as<float>()[0] ==
          step_b({rx, ry}, {.batch = batch}).at(0).as<float>()[0]);
  }
  CHECK(params(a) == params(b));
  // A change through setValue reaches the ranks' device copies.
  Array shifted = Array::copyOf(xs);
  for (int64_t i = 0; i < shifted.size(); ++i)
    shifted.as<float>()[i] += 0.5f;
  x.setValue(shifted);
  rx.setValue(shifted);
  Function loss_a = session.function(a, "loss");
  Function loss_b = session.function(b, "loss");
  CHECK(loss_a({x, y}).at(0).as<float>()[0] == loss_b({rx, ry}).at(0).as<float>()[0]);
}

}  // namespace
}  // namespace synk
