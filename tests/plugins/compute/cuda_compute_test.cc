// The compute library's CUDA side against its host side (the reference CI tests): GEMM in three
// precisions, every kernel, the initialisers bit for bit, every update rule, graph replay.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "synk/plugins/compute/gemm.h"
#include "synk/plugins/compute/init.h"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/compute/update_rules.h"
#include "tests/plugins/compute/cuda_fixture.h"

namespace synk::compute {
namespace {

using testing::Gpu;
using testing::randomVector;
using testing::requireClose;

TEST_CASE("cuBLAS gemm matches the host gemm in fp32, tf32 and bf16", "[gpu]") {
  Gpu gpu;
  const auto [precision, tolerance] = GENERATE(table<Precision, double>(
      {{Precision::Fp32, 1e-5}, {Precision::Tf32, 3e-3}, {Precision::Bf16, 2e-2}}));
  for (const auto& [m, n, k, ta, tb] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, Transpose, Transpose>>{
           {256, 256, 785, Transpose::No, Transpose::No},
           {785, 256, 256, Transpose::Yes, Transpose::No},
           {256, 784, 256, Transpose::No, Transpose::Yes},
           {13, 33, 300, Transpose::Yes, Transpose::Yes}}) {
    INFO("precision " << precisionName(precision) << " m=" << m << " n=" << n << " k=" << k);
    GemmArgs g;
    g.trans_a = ta;
    g.trans_b = tb;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = 0.5f;
    g.beta = 0.25f;
    g.lda = ta == Transpose::No ? k : m;
    g.ldb = tb == Transpose::No ? n : k;
    g.ldc = n + 3;
    g.precision = precision;
    const auto a = randomVector(size_t(m * k), 1), b = randomVector(size_t(k * n), 2);
    const auto c = randomVector(size_t(m * g.ldc), 3);
    std::vector<float> want = c;
    g.a = a.data();
    g.b = b.data();
    g.c = want.data();
    gemm(hostDevice(), g);
    g.a = gpu.upload(a);
    g.b = gpu.upload(b);
    g.c = gpu.upload(c);
    gemm(gpu.device(), g);
    // Errors grow with sqrt(k) for random signs; scale the tolerance by the products' size.
    requireClose(gpu.download(g.c, c.size()), want, tolerance * std::sqrt(double(k)));
  }
}

TEST_CASE("the CUDA kernels match the host kernels", "[gpu]") {
  Gpu gpu;
  const Device dev = gpu.device();
  const int64_t rows = 300, cols = 70, ld = 73;
  const auto x = randomVector(size_t(rows * ld), 4);
  SECTION("relu, its backward pass, the bias column") {
    std::vector<float> z = x, d = randomVector(x.size(), 5);
    float* dz = gpu.upload(z);
    float* dd = gpu.upload(d);
    host::relu(z.data(), rows, cols, ld);
    relu(dev, dz, rows, cols, ld);
    requireClose(gpu.download(dz, z.size()), z, 0);
    host::reluBackward(z.data(), ld, d.data(), ld, rows, cols);
    reluBackward(dev, dz, ld, dd, ld, rows, cols);
    requireClose(gpu.download(dd, d.size()), d, 0);
  }
  SECTION("bias with and without relu, column sums, matrix copies") {
    const auto bias = randomVector(size_t(cols), 9);
    const float* dbias = gpu.upload(bias);
    for (const bool with_relu : {false, true}) {
      std::vector<float> z = x;
      float* dz = gpu.upload(z);
      host::addBias(z.data(), rows, cols, ld, bias.data(), with_relu);
      addBias(dev, dz, rows, cols, ld, dbias, with_relu);
      requireClose(gpu.download(dz, z.size()), z, 0);
    }
    const float* dx = gpu.upload(x);
    std::vector<float> sums = randomVector(size_t(cols), 10);
    float* dsums = gpu.upload(sums);
    host::columnSum(x.data(), rows, cols, ld, -0.25f, sums.data(), sums.data());
    columnSum(dev, dx, rows, cols, ld, -0.25f, dsums, dsums);
    requireClose(gpu.download(dsums, sums.size()), sums, 1e-6);
    host::columnSum(x.data(), rows, cols, ld, 1, nullptr, sums.data());
    columnSum(dev, dx, rows, cols, ld, 1, nullptr, dsums);
    requireClose(gpu.download(dsums, sums.size()), sums, 1e-6);
    std::vector<float> y(size_t(rows * 80), -7);
    float* dy = gpu.upload(y);
    host::copyMatrix(x.data(), ld, y.data(), 80, rows, cols);
    copyMatrix(dev, dx, ld, dy, 80, rows, cols);
    requireClose(gpu.download(dy, y.size()), y, 0);
  }
  SECTION("fill, scale, axpy, divideBy, sum") {
    std::vector<float> y = randomVector(x.size(), 6);
    float* dx = gpu.upload(x);
    float* dy = gpu.upload(y);
    host::axpy(int64_t(x.size()), 0.3f, x.data(), y.data());
    axpy(dev, int64_t(x.size()), 0.3f, dx, dy);
    host::scale(y.data(), 100, -2);
    scale(dev, dy, 100, -2);
    const std::vector<float> divisor = {3};
    host::divideBy(y.data(), y.data(), 50, divisor.data());
    divideBy(dev, dy, dy, 50, gpu.upload(divisor));
    host::fill(y.data() + 7, 9, 0.5f);
    fill(dev, dy + 7, 9, 0.5f);
    requireClose(gpu.download(dy, y.size()), y, 1e-6);
    // More elements than the kernel's fixed grid has threads: the grid-stride loop takes them.
    const std::vector<float> valid = {5}, invalid = {-std::numeric_limits<float>::infinity()};
    const std::vector<float> src = randomVector(100000, 11);
    std::vector<float> dst = randomVector(100000, 12);
    float* dsrc = gpu.upload(src);
    float* ddst = gpu.upload(dst);
    restoreIfInvalid(dev, gpu.upload(valid), dsrc, ddst, int64_t(dst.size()));
    requireClose(gpu.download(ddst, dst.size()), dst, 0);
    restoreIfInvalid(dev, gpu.upload(invalid), dsrc, ddst, int64_t(dst.size()) - 3);
    std::copy(src.begin(), src.end() - 3, dst.begin());
    requireClose(gpu.download(ddst, dst.size()), dst, 0);
    float want = 0;
    host::sum(y.data(), int64_t(y.size()), &want);
    float* out = gpu.upload(std::vector<float>(1 + kSumScratch));
    sum(dev, dy, int64_t(y.size()), out, out + 1);
    requireClose(gpu.download(out, 1), {want}, 1e-5);
  }
  SECTION("softmax cross-entropy with its gradient and metrics") {
    const int64_t classes = 10, n = 1000;
    const auto logits = randomVector(size_t(n * classes), 7, 4);
    std::vector<int32_t> labels(n);
    for (int64_t i = 0; i < n; ++i)
      labels[i] = int32_t((i * 7) % classes);
    std::vector<float> d(logits.size()), scalars(3);
    std::vector<double> metrics = {1, 2, 3};
    CrossEntropyArgs args;
    args.logits = logits.data();
    args.rows = n;
    args.classes = classes;
    args.ld = classes;
    args.labels = labels.data();
    args.dlogits = d.data();
    args.ld_d = classes;
    args.mean_loss = &scalars[0];
    args.accuracy = &scalars[1];
    args.rows_out = &scalars[2];
    args.metrics_in = metrics.data();
    args.metrics_out = metrics.data();
    host::softmaxCrossEntropy(args);
    float* dd = gpu.upload(std::vector<float>(d.size()));
    float* ds = gpu.upload(std::vector<float>(3));
    double* dm = gpu.upload(std::vector<double>{1, 2, 3});
    args.logits = gpu.upload(logits);
    args.labels = gpu.upload(labels);
    args.dlogits = dd;
    args.mean_loss = ds;
    args.accuracy = ds + 1;
    args.rows_out = ds + 2;
    args.metrics_in = dm;
    args.metrics_out = dm;
    softmaxCrossEntropy(dev, args);
    requireClose(gpu.download(dd, d.size()), d, 1e-5);
    requireClose(gpu.download(ds, 3), scalars, 1e-5);
    const auto got = gpu.download(dm, 3);
    for (int i = 0; i < 3; ++i)
      CHECK(got[i] == Approx(metrics[i]).epsilon(1e-6));
    // A bad label: NaN on its row only, or (as the fused sgd step asks) zeros on every row.
    labels[5] = int32_t(classes);
    args.labels = gpu.upload(labels);
    softmaxCrossEntropy(dev, args);
    const auto nan_rows = gpu.download(dd, d.size());
    CHECK(std::isnan(nan_rows[5 * classes]));
    CHECK(!std::isnan(nan_rows[4 * classes]));
    args.invalid_zeroes_dlogits = true;
    softmaxCrossEntropy(dev, args);
    CHECK(gpu.download(dd, d.size()) == std::vector<float>(d.size(), 0.0f));
    CHECK(gpu.download(dm, 3) == got);  // metrics unchanged by a bad batch
    // The whole batch's labels (rows exchange): its row count as the divisor, and another
    // rank's bad label zeroes this rank's dlogits and makes the divisor -infinity.
    labels[5] = 5;
    args.labels = gpu.upload(labels);
    std::vector<int32_t> batch(2 * n, 1);
    args.all_labels = gpu.upload(batch);
    args.all_rows = 2 * n;
    args.batch_rows = 2 * n - 3;
    softmaxCrossEntropy(dev, args);
    CHECK(gpu.download(ds, 3)[2] == float(2 * n - 3));
    requireClose(gpu.download(dd, d.size()), d, 1e-5);
    batch[2 * n - 1] = -1;
    args.all_labels = gpu.upload(batch);
    softmaxCrossEntropy(dev, args);
    CHECK(gpu.download(ds, 3)[2] == -INFINITY);
    CHECK(gpu.download(dd, d.size()) == std::vector<float>(d.size(), 0.0f));
  }
}

TEST_CASE("the initialisers give the host's values bit for bit", "[gpu]") {
  Gpu gpu;
  const int64_t n = 1 << 20;
  for (const bool use_normal : {false, true}) {
    const InitArgs args{12345, 999, -0.1f, 0.3f};
    std::vector<float> want(n);
    use_normal ? host::normal(want.data(), n, args) : host::uniform(want.data(), n, args);
    float* d = gpu.upload(std::vector<float>(n));
    use_normal ? normal(gpu.device(), d, n, args) : uniform(gpu.device(), d, n, args);
    CHECK(gpu.download(d, size_t(n)) == want);
  }
}

TEST_CASE("each fused update kernel matches the host update", "[gpu]") {
  Gpu gpu;
  const std::string name = GENERATE(from_range(ruleNames()));
  const bool in_place = GENERATE(false, true);
  INFO(name << (in_place ? " in place" : " out of place"));
  const Rule rule = parseRule(name);
  const Hyper h = defaultHyper(rule);
  const int64_t n = 10001;
  std::vector<float> p = randomVector(n, 8), s0(n, 0), s1(n, 0);
  int64_t step = 0;
  float* dp = gpu.upload(p);
  float* dp2 = gpu.upload(p);
  float* ds0 = gpu.upload(s0);
  float* ds0b = gpu.upload(s0);
  float* ds1 = gpu.upload(s1);
  float* ds1b = gpu.upload(s1);
  int64_t* dstep = gpu.upload(std::vector<int64_t>{0, 0});
  const std::vector<float> divisor = {4};
  const float* ddiv = gpu.upload(divisor);
  for (int k = 0; k < 3; ++k) {
    const auto g = randomVector(n, 20 + k, 4);
    UpdateArgs a;
    a.n = n;
    a.param = p.data();
    a.param_out = p.data();
    a.grad = g.data();
    a.grad_divisor = divisor.data();
    a.state[0] = a.state_out[0] = s0.data();
    a.state[1] = a.state_out[1] = s1.data();
    a.step = a.step_out = &step;
    host::applyUpdate(rule, h, a);
    a.grad = gpu.upload(g);
    a.grad_divisor = ddiv;
    a.param = dp;
    a.param_out = in_place ? dp : dp2;
    a.state[0] = ds0;
    a.state_out[0] = in_place ? ds0 : ds0b;
    a.state[1] = ds1;
    a.state_out[1] = in_place ? ds1 : ds1b;
    a.step = dstep;
    a.step_out = in_place ? dstep : dstep + 1;
    applyUpdate(gpu.device(), rule, h, a);
    if (!in_place) {  // the runtime's way: the new values become the next step's inputs
      std::swap(dp, dp2);
      std::swap(ds0, ds0b);
      std::swap(ds1, ds1b);
      gpu.download(dstep, 2);
      cudaMemcpy(dstep, dstep + 1, sizeof(int64_t), cudaMemcpyDeviceToDevice);
    }
  }
  requireClose(gpu.download(dp, size_t(n)), p, 2e-6);
  requireClose(gpu.download(ds0, size_t(n)), s0, 2e-6);
  requireClose(gpu.download(ds1, size_t(n)), s1, 2e-6);
  CHECK(gpu.download(dstep, 1)[0] == step);
}

TEST_CASE("an update kernel with a divisor that is not positive changes nothing", "[gpu]") {
  Gpu gpu;
  const std::string name = GENERATE(from_range(ruleNames()));
  INFO(name);
  const Rule rule = parseRule(name);
  const std::vector<float> p0 = randomVector(999, 30), s0 = randomVector(999, 31);
  UpdateArgs a;
  a.n = 999;
  a.param = gpu.upload(p0);
  a.param_out = gpu.upload(std::vector<float>(999));
  a.grad = gpu.upload(randomVector(999, 32));
  a.grad_divisor = gpu.upload(std::vector<float>{-INFINITY});
  a.state[0] = a.state[1] = gpu.upload(s0);
  a.state_out[0] = gpu.upload(std::vector<float>(999));
  a.state_out[1] = gpu.upload(std::vector<float>(999));
  int64_t* step = gpu.upload(std::vector<int64_t>{5, 0});
  a.step = step;
  a.step_out = step + 1;
  applyUpdate(gpu.device(), rule, defaultHyper(rule), a);
  CHECK(gpu.download(a.param_out, 999) == p0);
  CHECK(gpu.download(a.state_out[0], 999) == s0);
  CHECK(gpu.download(a.state_out[1], 999) == s0);
  if (countsSteps(rule)) CHECK(gpu.download(step, 2)[1] == 5);
}

TEST_CASE("a graph cache replays a captured sequence", "[gpu]") {
  Gpu gpu;
  cuda::GraphCache cache(gpu.context(), 2);
  std::vector<float> y(1000, 1), x(1000, 0.5f);
  float* dy = gpu.upload(y);
  const float* dx = gpu.upload(x);
  const Device dev = gpu.device();
  for (int k = 0; k < 4; ++k) {
    cache.run({uint64_t(reinterpret_cast<uintptr_t>(dy))}, gpu.stream(), [&] {
      axpy(dev, 1000, 2, dx, dy);
      scale(dev, dy, 1000, 0.5f);
    });
  }
  // y = (y + 1) / 2 four times from 1: 1 every time.
  requireClose(gpu.download(dy, 1000), std::vector<float>(1000, 1), 0);
  CHECK(cache.captures() == 1);
  CHECK(cache.launches() == 3);
}

}  // namespace
}  // namespace synk::compute
