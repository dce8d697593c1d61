// GEMM with epilogues on the GPU against the host gemm (the reference CI tests): cublasGemmEx
// with epilogue kernels, cuBLASLt with heuristic #0 and autotuned cuBLASLt, in three precisions,
// out-of-place C, the bias gradient fused (alpha 1) and not (alpha != 1); and autotuning once per
// problem, its choice reused, none inside a graph capture.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "synk/plugins/compute/gemm.h"
#include "synk/plugins/compute/gemm_lt.h"
#include "tests/plugins/compute/cuda_fixture.h"

namespace synk::compute {
namespace {

using testing::Gpu;
using testing::randomVector;
using testing::requireClose;

struct Case {
  int64_t m, n, k;
  Transpose ta, tb;
  Epilogue epilogue;
  float alpha, beta;
  bool out_of_place;  // C from c_in
  int64_t pad;        // added to every leading dimension
};

std::string name(const Case& c) {
  return std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
         (c.ta == Transpose::Yes ? " A^T" : "") + (c.tb == Transpose::Yes ? " B^T" : "") +
         ", epilogue " + epilogueName(c.epilogue) + ", alpha " + std::to_string(c.alpha) +
         ", beta " + std::to_string(c.beta) + (c.out_of_place ? ", c_in" : "");
}

// The shapes the mlp runs (forward with bias and relu, the weight gradient with its bias
// gradient or with the sgd step folded in, the delta below a layer) and awkward ones.
const std::vector<Case> kCases = {
    {64, 256, 784, Transpose::No, Transpose::No, Epilogue::ReluBias, 1, 0, false, 0},
    {64, 10, 128, Transpose::No, Transpose::No, Epilogue::Bias, 1, 0, false, 2},
    {256, 128, 96, Transpose::Yes, Transpose::No, Epilogue::BiasGrad, 1, 0, false, 0},
    {256, 128, 96, Transpose::Yes, Transpose::No, Epilogue::None, -0.01f, 1, true, 0},
    {96, 256, 128, Transpose::No, Transpose::Yes, Epilogue::None, 1, 0, false, 0},
    {13, 33, 300, Transpose::Yes, Transpose::No, Epilogue::BiasGrad, 0.5f, 0.25f, true, 3},
    {13, 33, 300, Transpose::Yes, Transpose::Yes, Epilogue::ReluBias, 1, 0.5f, false, 1},
    {7, 6, 5, Transpose::No, Transpose::No, Epilogue::Bias, 1, 0, false, 0}};

void checkCase(Gpu& gpu, const Device& device, const Case& c, Precision precision,
               double tolerance) {
  INFO(name(c) << ", " << precisionName(precision));
  GemmArgs g;
  g.trans_a = c.ta;
  g.trans_b = c.tb;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.alpha = c.alpha;
  g.beta = c.beta;
  g.lda = (c.ta == Transpose::No ? c.k : c.m) + c.pad;
  g.ldb = (c.tb == Transpose::No ? c.n : c.k) + c.pad;
  g.ldc = c.n + c.pad;
  g.epilogue = c.epilogue;
  g.precision = precision;
  const int64_t a_rows = c.ta == Transpose::No ? c.m : c.k;
  const int64_t b_rows = c.tb == Transpose::No ? c.k : c.n;
  const auto a = randomVector(size_t(a_rows * g.lda), 1);
  const auto b = randomVector(size_t(b_rows * g.ldb), 2);
  const auto c0 = randomVector(size_t(c.m * g.ldc), 3);
  const auto prior = randomVector(size_t(c.m * g.ldc), 4);
  const auto bias = randomVector(size_t(c.n), 5);
  std::vector<float> want = c0, want_grad(size_t(c.n), -9);
  g.a = a.data();
  g.b = b.data();
  g.c = want.data();
  g.c_in = c.out_of_place ? prior.data() : nullptr;
  g.bias = bias.data();
  g.bias_grad = want_grad.data();
  gemm(hostDevice(), g);
  float* dc = gpu.upload(c0);
  float* dgrad = gpu.upload(std::vector<float>(size_t(c.n), -9));
  const float* dprior = gpu.upload(prior);
  g.a = gpu.upload(a);
  g.b = gpu.upload(b);
  g.c = dc;
  g.c_in = c.out_of_place ? dprior : nullptr;
  g.bias = gpu.upload(bias);
  g.bias_grad = dgrad;
  gemm(device, g);
  // Errors grow with sqrt(k) for random signs; scale the tolerance by the products' size.
  const double scaled = tolerance * std::sqrt(double(c.k));
  requireClose(gpu.download(dc, want.size()), want, scaled);
  requireClose(gpu.download(dgrad, want_grad.size()), want_grad, scaled);
  if (c.out_of_place) CHECK(gpu.download(dprior, prior.size()) == prior);
}

TEST_CASE("every GPU gemm path with every epilogue matches the host gemm", "[gpu]") {
  Gpu gpu;
  const std::string path = GENERATE("cublas", "lt", "lt_tuned");
  const auto [precision, tolerance] = GENERATE(table<Precision, double>(
      {{Precision::Fp32, 1e-5}, {Precision::Tf32, 3e-3}, {Precision::Bf16, 2e-2}}));
  INFO(path);
  std::unique_ptr<cuda::LtMatmul> lt;
  if (path != "cublas") lt = std::make_unique<cuda::LtMatmul>(gpu.context(), path == "lt_tuned");
  Device device = gpu.device();
  device.lt = lt.get();
  for (const Case& c : kCases)
    checkCase(gpu, device, c, precision, tolerance);
  if (!lt) return;
  const cuda::LtMatmul::Stats stats = lt->stats();
  CHECK(stats.plans == kCases.size());
  CHECK(stats.runs == kCases.size());
  // An alpha other than 1 keeps the bias gradient out of the GEMM (a kernel after it).
  CHECK(stats.fallbacks >= 1);
  WARN(path << " " << precisionName(precision) << ": " << stats.fallbacks << " of " << stats.plans
            << " epilogues ran as kernels, " << stats.tuned << " plans tuned");
}

TEST_CASE("autotuning times a problem once and reuses its choice, never inside a capture",
          "[gpu]") {
  Gpu gpu;
  cuda::LtMatmul lt(gpu.context(), true);
  Device device = gpu.device();
  device.lt = &lt;
  const int64_t size = 1024;
  const auto a = randomVector(size_t(size * size), 1), b = randomVector(size_t(size * size), 2);
  GemmArgs g;
  g.m = g.n = g.k = size;
  g.lda = g.ldb = g.ldc = size;
  g.a = gpu.upload(a);
  g.b = gpu.upload(b);
  g.c = gpu.upload(std::vector<float>(size_t(size * size)));
  gemm(device, g);
  const cuda::LtMatmul::Stats first = lt.stats();
  CHECK(first.plans == 1);
  // A 1024^3 fp32 product has several candidate algorithms; if cuBLASLt offered only one there
  // would be nothing to time.
  CHECK(first.tuned == 1);
  gemm(device, g);
  gemm(device, g);
  CHECK(lt.stats().plans == 1);
  CHECK(lt.stats().tuned == first.tuned);
  CHECK(lt.stats().runs == 3);

  // A new problem first met while the stream is captured keeps heuristic #0 (timing needs host
  // waits); the graph replays it correctly.
  std::vector<float> want(size_t(size * 512));
  GemmArgs half = g;
  half.n = 512;
  half.ldc = 512;
  half.c = want.data();
  half.a = a.data();
  half.b = b.data();
  gemm(hostDevice(), half);
  half.a = g.a;
  half.b = g.b;
  half.c = gpu.upload(std::vector<float>(want.size()));
  const auto stream = static_cast<cudaStream_t>(gpu.stream());
  testing::cudaOk(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture");
  gemm(device, half);
  cudaGraph_t graph = nullptr;
  testing::cudaOk(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  testing::cudaOk(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  testing::cudaOk(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  requireClose(gpu.download(half.c, want.size()), want, 1e-5 * std::sqrt(double(size)));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  CHECK(lt.stats().plans == 2);
  CHECK(lt.stats().tuned == first.tuned);
}

}  // namespace
}  // namespace synk::compute
