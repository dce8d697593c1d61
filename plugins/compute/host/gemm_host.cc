// The host GEMM: Goto's blocking (as in BLIS). B is packed a KC x NC panel at a time into
// NR-wide strips, A an MC x KC block at a time into MR-tall strips, so the micro-kernel streams
// both from cache with unit stride whatever the transposes; it keeps a 6 x 16 tile of C in 12
// AVX2 registers (two FMA units, 8 floats each). The blocking order is fixed, so results are
// deterministic. One thread: each rank is its own process on its own core.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "synk/plugins/compute/gemm.h"

namespace synk::compute::host {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;
constexpr int64_t kKc = 256;   // a 6 x 256 A strip and a 256 x 16 B strip fit in L1 together
constexpr int64_t kMc = 96;    // packed A block (96 KiB) stays in L2
constexpr int64_t kNc = 2048;  // packed B panel (2 MiB) stays in L3

float elementA(const GemmArgs& g, int64_t i, int64_t p) {
  return g.trans_a == Transpose::No ? g.a[i * g.lda + p] : g.a[p * g.lda + i];
}
float elementB(const GemmArgs& g, int64_t p, int64_t j) {
  return g.trans_b == Transpose::No ? g.b[p * g.ldb + j] : g.b[j * g.ldb + p];
}

// A[ic.., pc..] as MR-row strips: strip s holds element (s*MR + i, p) at [s*MR*kc + p*MR + i].
void packA(const GemmArgs& g, int64_t ic, int64_t pc, int64_t mc, int64_t kc, float* out) {
  for (int64_t s = 0; s < mc; s += kMr) {
    float* strip = out + s * kc;
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - s));
    for (int64_t p = 0; p < kc; ++p) {
      for (int i = 0; i < kMr; ++i)
        strip[p * kMr + i] = i < rows ? elementA(g, ic + s + i, pc + p) : 0.0f;
    }
  }
}

// B[pc.., jc..] as NR-column strips: strip s holds (p, s*NR + j) at [s*NR*kc + p*NR + j].
void packB(const GemmArgs& g, int64_t pc, int64_t jc, int64_t kc, int64_t nc, float* out) {
  for (int64_t s = 0; s < nc; s += kNr) {
    float* strip = out + s * kc;
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - s));
    if (g.trans_b == Transpose::No && cols == kNr) {
      for (int64_t p = 0; p < kc; ++p)
        std::copy_n(g.b + (pc + p) * g.ldb + jc + s, kNr, strip + p * kNr);
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int j = 0; j < kNr; ++j)
        strip[p * kNr + j] = j < cols ? elementB(g, pc + p, jc + s + j) : 0.0f;
    }
  }
}

// C tile = alpha * acc + beta * C for the rows x cols that exist; beta == 0 never reads C.
void writeTile(const float* acc, float* c, int64_t ldc, float alpha, float beta, int rows,
               int cols) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const float value = alpha * acc[i * kNr + j];
      c[i * ldc + j] = beta == 0.0f ? value : value + beta * c[i * ldc + j];
    }
  }
}

// GCC/Clang vector extensions: SSE2 on any x86-64, NEON elsewhere; no intrinsics.
using Float4 = float __attribute__((vector_size(16)));

void microPortable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                   float beta, int rows, int cols) {
  Float4 acc[kMr][kNr / 4] = {};
  for (int64_t p = 0; p < kc; ++p) {
    Float4 bv[kNr / 4];
    std::memcpy(bv, b + p * kNr, sizeof bv);
    for (int i = 0; i < kMr; ++i) {
      const float ai = a[p * kMr + i];
      for (int q = 0; q < kNr / 4; ++q)
        acc[i][q] += ai * bv[q];
    }
  }
  float tile[kMr * kNr];
  std::memcpy(tile, acc, sizeof tile);
  writeTile(tile, c, ldc, alpha, beta, rows, cols);
}

__attribute__((target("avx2,fma"))) void microAvx2(int64_t kc, const float* a, const float* b,
                                                   float* c, int64_t ldc, float alpha, float beta,
                                                   int rows, int cols) {
  __m256 c0l = _mm256_setzero_ps(), c0h = _mm256_setzero_ps();
  __m256 c1l = _mm256_setzero_ps(), c1h = _mm256_setzero_ps();
  __m256 c2l = _mm256_setzero_ps(), c2h = _mm256_setzero_ps();
  __m256 c3l = _mm256_setzero_ps(), c3h = _mm256_setzero_ps();
  __m256 c4l = _mm256_setzero_ps(), c4h = _mm256_setzero_ps();
  __m256 c5l = _mm256_setzero_ps(), c5h = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 bl = _mm256_loadu_ps(b + p * kNr);
    const __m256 bh = _mm256_loadu_ps(b + p * kNr + 8);
    const float* ap = a + p * kMr;
    __m256 ai = _mm256_broadcast_ss(ap + 0);
    c0l = _mm256_fmadd_ps(ai, bl, c0l);
    c0h = _mm256_fmadd_ps(ai, bh, c0h);
    ai = _mm256_broadcast_ss(ap + 1);
    c1l = _mm256_fmadd_ps(ai, bl, c1l);
    c1h = _mm256_fmadd_ps(ai, bh, c1h);
    ai = _mm256_broadcast_ss(ap + 2);
    c2l = _mm256_fmadd_ps(ai, bl, c2l);
    c2h = _mm256_fmadd_ps(ai, bh, c2h);
    ai = _mm256_broadcast_ss(ap + 3);
    c3l = _mm256_fmadd_ps(ai, bl, c3l);
    c3h = _mm256_fmadd_ps(ai, bh, c3h);
    ai = _mm256_broadcast_ss(ap + 4);
    c4l = _mm256_fmadd_ps(ai, bl, c4l);
    c4h = _mm256_fmadd_ps(ai, bh, c4h);
    ai = _mm256_broadcast_ss(ap + 5);
    c5l = _mm256_fmadd_ps(ai, bl, c5l);
    c5h = _mm256_fmadd_ps(ai, bh, c5h);
  }
  alignas(32) float acc[kMr * kNr];
  const __m256 regs[2 * kMr] = {c0l, c0h, c1l, c1h, c2l, c2h, c3l, c3h, c4l, c4h, c5l, c5h};
  if (rows == kMr && cols == kNr) {
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    for (int i = 0; i < kMr; ++i) {
      for (int h = 0; h < 2; ++h) {
        float* out = c + i * ldc + h * 8;
        __m256 value = _mm256_mul_ps(va, regs[2 * i + h]);
        if (beta != 0.0f) value = _mm256_fmadd_ps(vb, _mm256_loadu_ps(out), value);
        _mm256_storeu_ps(out, value);
      }
    }
    return;
  }
  for (int r = 0; r < 2 * kMr; ++r)
    _mm256_store_ps(acc + r * 8, regs[r]);
  writeTile(acc, c, ldc, alpha, beta, rows, cols);
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*, int64_t, float, float,
                             int, int);

MicroKernel pickMicroKernel(CpuKernel kernel) {
  if (kernel == CpuKernel::Portable) return &microPortable;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? &microAvx2
                                                                         : &microPortable;
}

void scaleC(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float* row = g.c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j)
      row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
  }
}

}  // namespace

void gemm(const GemmArgs& g, CpuKernel kernel) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0 || g.alpha == 0.0f) return scaleC(g);
  const MicroKernel micro = pickMicroKernel(kernel);
  const int64_t mc_max = std::min(kMc, (g.m + kMr - 1) / kMr * kMr);
  const int64_t kc_max = std::min(kKc, g.k);
  const int64_t nc_max = std::min(kNc, (g.n + kNr - 1) / kNr * kNr);
  std::vector<float> packed_a(static_cast<size_t>(mc_max * kc_max));
  std::vector<float> packed_b(static_cast<size_t>(kc_max * nc_max));
  for (int64_t jc = 0; jc < g.n; jc += kNc) {
    const int64_t nc = std::min(kNc, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKc) {
      const int64_t kc = std::min(kKc, g.k - pc);
      packB(g, pc, jc, kc, nc, packed_b.data());
      const float beta = pc == 0 ? g.beta : 1.0f;  // later K blocks accumulate
      for (int64_t ic = 0; ic < g.m; ic += kMc) {
        const int64_t mc = std::min(kMc, g.m - ic);
        packA(g, ic, pc, mc, kc, packed_a.data());
        for (int64_t js = 0; js < nc; js += kNr) {
          const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - js));
          for (int64_t is = 0; is < mc; is += kMr) {
            const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - is));
            micro(kc, packed_a.data() + is * kc, packed_b.data() + js * kc,
                  g.c + (ic + is) * g.ldc + jc + js, g.ldc, g.alpha, beta, rows, cols);
          }
        }
      }
    }
  }
}

}  // namespace synk::compute::host
