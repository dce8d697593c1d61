#pragma once
// C = alpha * op(A) * op(B) + beta * C on row-major float32 matrices: cuBLAS on a cuda Device
// (fp32, or tf32 / bf16 tensor cores as Precision says), a blocked CPU kernel on the host.
#include <cstdint>

#include "plugins/compute/device.h"

namespace synk::compute {

enum class Transpose { No, Yes };

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
  Precision precision = Precision::Fp32;  // cuda only
};

// Throws sdk::Error(InvalidArgument) on inconsistent sizes, sdk::Error(Device) when cuBLAS fails.
void gemm(const Device& device, const GemmArgs& args);

namespace host {
// Auto: AVX2 + FMA when the CPU has them (checked at run time), else portable C++. Portable is
// there for tests, which check both.
enum class CpuKernel { Auto, Portable };
// Packs panels of A and B and runs a 6 x 16 register-blocked micro-kernel.
void gemm(const GemmArgs& args, CpuKernel kernel = CpuKernel::Auto);
}  // namespace host

namespace cuda {
void gemm(void* blas, const GemmArgs& args);
}  // namespace cuda

}  // namespace synk::compute
