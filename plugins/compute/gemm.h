#pragma once
// D = alpha * op(A) * op(B) + beta * C, then an epilogue, on row-major float32 matrices: cuBLAS
// (cublasGemmEx) or cuBLASLt (gemm_lt.h: fused epilogues, a heuristic or autotuned algorithm) on a
// cuda Device (fp32, or tf32 / bf16 tensor cores as Precision says), a blocked CPU kernel on the
// host. D is `c`; C is `c_in` when given (out of place), else `c` itself.
#include <cstdint>

#include "synk/plugins/compute/device.h"

namespace synk::compute {

enum class Transpose { No, Yes };

// What happens to the product on its way out, in row-major terms (D is m x n). Where cuBLASLt
// cannot fuse one (an algorithm that lacks it, the cublasGemmEx path, the host), a kernel does it
// after the GEMM: the result is the same either way, to rounding.
enum class Epilogue {
  None,
  Bias,      // D[i, j] += bias[j]
  ReluBias,  // D[i, j] = max(D[i, j] + bias[j], 0)
  BiasGrad,  // also bias_grad[j] = sum over p of op(B)[p, j] (op(B) = B: trans_b must be No),
             // the bias gradient of a layer whose output gradient is B: with A = the layer's
             // input, one call gives dW = A^T B and db.
};
const char* epilogueName(Epilogue epilogue);

struct GemmArgs {
  Transpose trans_a = Transpose::No;  // op(A) is m x k: A is m x k (No) or k x m (Yes)
  Transpose trans_b = Transpose::No;  // op(B) is k x n: B is k x n (No) or n x k (Yes)
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1;
  const float* a = nullptr;
  int64_t lda = 0;  // row stride of A as stored
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0;  // 0: C is not read (may hold anything, NaN included)
  float* c = nullptr;
  int64_t ldc = 0;
  // C when it is not `c` (same ldc), e.g. parameters updated out of place: c = c_in + alpha AB.
  // cuBLASLt reads it directly; the other paths copy it into `c` first. May equal `c`.
  const float* c_in = nullptr;
  Epilogue epilogue = Epilogue::None;
  const float* bias = nullptr;            // Bias, ReluBias: n values
  float* bias_grad = nullptr;             // BiasGrad: n values, written (not accumulated)
  Precision precision = Precision::Fp32;  // cuda only
};

// Throws sdk::Error(InvalidArgument) on inconsistent sizes or a missing epilogue vector,
// sdk::Error(Device) when cuBLAS fails.
void gemm(const Device& device, const GemmArgs& args);
// The epilogue alone, as kernels on `device`, after a product already in args.c: what gemm()
// does on paths that cannot fuse it.
void applyEpilogue(const Device& device, const GemmArgs& args);

namespace host {
// Auto: AVX2 + FMA when the CPU has them (checked at run time), else portable C++. Portable is
// there for tests, which check both.
enum class CpuKernel { Auto, Portable };
// The product only (no c_in, no epilogue): packs panels of A and B and runs a 6 x 16
// register-blocked micro-kernel.
void gemm(const GemmArgs& args, CpuKernel kernel = CpuKernel::Auto);
}  // namespace host

namespace cuda {
// The product only, through cublasGemmEx (CUBLAS_GEMM_DEFAULT).
void gemm(void* blas, const GemmArgs& args);
}  // namespace cuda

}  // namespace synk::compute
