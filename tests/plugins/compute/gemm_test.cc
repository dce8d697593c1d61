// The host GEMM against a naive double-precision product: every transpose combination, sizes that
// straddle the 6 x 16 tile and the 256-deep K block and the 2048-wide N panel, padded leading
// dimensions, alpha and beta (beta = 0 must not read C), both micro-kernels.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "synk/plugins/compute/gemm.h"

namespace synk::compute {
namespace {

std::vector<float> randomMatrix(int64_t rows, int64_t ld, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> m(static_cast<size_t>(std::max<int64_t>(rows * ld, 1)));
  for (float& v : m)
    v = dist(rng);
  return m;
}

struct Case {
  int64_t m, n, k;
  Transpose ta, tb;
  float alpha, beta;
  int64_t pad;
};

void checkCase(const Case& c, host::CpuKernel kernel) {
  std::mt19937 rng(static_cast<unsigned>(c.m * 131 + c.n * 17 + c.k));
  const int64_t a_rows = c.ta == Transpose::No ? c.m : c.k;
  const int64_t a_cols = c.ta == Transpose::No ? c.k : c.m;
  const int64_t b_rows = c.tb == Transpose::No ? c.k : c.n;
  const int64_t b_cols = c.tb == Transpose::No ? c.n : c.k;
  GemmArgs g;
  g.trans_a = c.ta;
  g.trans_b = c.tb;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.alpha = c.alpha;
  g.beta = c.beta;
  g.lda = a_cols + c.pad;
  g.ldb = b_cols + c.pad;
  g.ldc = c.n + c.pad;
  std::vector<float> a = randomMatrix(a_rows, g.lda, rng), b = randomMatrix(b_rows, g.ldb, rng);
  std::vector<float> c0 = randomMatrix(c.m, g.ldc, rng);
  if (c.beta == 0) std::fill(c0.begin(), c0.end(), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> out = c0;
  g.a = a.data();
  g.b = b.data();
  g.c = out.data();
  host::gemm(g, kernel);
  auto at = [](const std::vector<float>& x, int64_t ld, Transpose t, int64_t i, int64_t j) {
    return t == Transpose::No ? x[i * ld + j] : x[j * ld + i];
  };
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double term = double(at(a, g.lda, c.ta, i, p)) * at(b, g.ldb, c.tb, p, j);
        ref += term;
        magnitude += std::fabs(term);
      }
      ref *= c.alpha;
      if (c.beta != 0) ref += double(c.beta) * c0[i * g.ldc + j];
      const double got = out[i * g.ldc + j];
      INFO("m=" << c.m << " n=" << c.n << " k=" << c.k << " at (" << i << ", " << j << ")");
      REQUIRE(std::fabs(got - ref) <= 1e-5 * (magnitude + std::fabs(ref)) + 1e-6);
    }
    // Padding after each row of C is never written.
    for (int64_t j = c.n; j < g.ldc; ++j) {
      const float before = c0[i * g.ldc + j], after = out[i * g.ldc + j];
      REQUIRE((before == after || (std::isnan(before) && std::isnan(after))));
    }
  }
}

TEST_CASE("host gemm matches a naive product for every transpose and awkward sizes",
          "[plugins][compute]") {
  const auto kernel = GENERATE(host::CpuKernel::Auto, host::CpuKernel::Portable);
  const auto ta = GENERATE(Transpose::No, Transpose::Yes);
  const auto tb = GENERATE(Transpose::No, Transpose::Yes);
  for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {7, 17, 5}, {6, 16, 256}, {13, 33, 300}, {100, 40, 257}, {5, 2100, 9}}) {
    for (const auto& [alpha, beta] : std::vector<std::pair<float, float>>{{1, 0}, {-0.5f, 0.75f}}) {
      checkCase({m, n, k, ta, tb, alpha, beta, (m + n) % 3}, kernel);
    }
  }
}

TEST_CASE("host gemm with k = 0 or alpha = 0 only scales C", "[plugins][compute]") {
  std::vector<float> c = {1, 2, 3, 4};
  GemmArgs g;
  g.m = 2;
  g.n = 2;
  g.k = 0;
  g.lda = 1;
  g.ldb = 2;
  g.ldc = 2;
  g.beta = 0.5f;
  g.c = c.data();
  gemm(hostDevice(), g);
  CHECK(c == std::vector<float>{0.5f, 1, 1.5f, 2});
  g.beta = 0;
  c.assign(4, std::numeric_limits<float>::quiet_NaN());
  gemm(hostDevice(), g);
  CHECK(c == std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("gemm adds a bias, with relu, sums a bias gradient and reads C from c_in",
          "[plugins][compute]") {
  // A (3 x 2), B (2 x 2), ldc 3; A B = {{1, 2}, {-3, -4}, {3.5, 5}}.
  const std::vector<float> a = {1, 0, 0, -1, 0.5f, 1}, b = {1, 2, 3, 4};
  const std::vector<float> prior = {10, 20, -1, 30, 40, -1, 50, 60, -1};
  const std::vector<float> bias = {0.5f, -1};
  GemmArgs g;
  g.m = 3;
  g.n = 2;
  g.k = 2;
  g.a = a.data();
  g.lda = 2;
  g.b = b.data();
  g.ldb = 2;
  g.ldc = 3;
  g.bias = bias.data();
  std::vector<float> c(9, -1);
  g.c = c.data();
  g.epilogue = Epilogue::Bias;
  gemm(hostDevice(), g);
  CHECK(c == std::vector<float>{1.5f, 1, -1, -2.5f, -5, -1, 4, 4, -1});
  g.epilogue = Epilogue::ReluBias;
  gemm(hostDevice(), g);
  CHECK(c == std::vector<float>{1.5f, 1, -1, 0, 0, -1, 4, 4, -1});
  // c = prior - 0.5 A B out of place, and the column sums of B (4, 6).
  std::vector<float> sums(2);
  g.epilogue = Epilogue::BiasGrad;
  g.bias_grad = sums.data();
  g.alpha = -0.5f;
  g.beta = 1;
  g.c_in = prior.data();
  gemm(hostDevice(), g);
  CHECK(c == std::vector<float>{9.5f, 19, -1, 31.5f, 42, -1, 48.25f, 57.5f, -1});
  CHECK(sums == std::vector<float>{4, 6});
  CHECK(prior[0] == 10);
  g.epilogue = Epilogue::Bias;
  g.bias = nullptr;
  CHECK_THROWS_WITH(gemm(hostDevice(), g), "gemm: epilogue bias without a bias vector");
  g.epilogue = Epilogue::BiasGrad;
  g.trans_b = Transpose::Yes;
  CHECK_THROWS_WITH(gemm(hostDevice(), g), "gemm: epilogue bias_grad needs trans_b = No");
}

TEST_CASE("gemm refuses leading dimensions smaller than a row", "[plugins][compute]") {
  std::vector<float> x(16);
  GemmArgs g;
  g.m = g.n = g.k = 4;
  g.a = g.b = x.data();
  g.c = x.data();
  g.lda = 4;
  g.ldb = 4;
  g.ldc = 3;
  CHECK_THROWS_WITH(gemm(hostDevice(), g), "gemm: ldc 3 is smaller than C's row of 4");
  g.ldc = 4;
  g.trans_a = Transpose::Yes;
  g.m = 5;
  CHECK_THROWS_WITH(gemm(hostDevice(), g), "gemm: lda 4 is smaller than A's row of 5");
}

}  // namespace
}  // namespace synk::compute
