// gemm() on cuBLAS: a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so
// the operands swap and the transposes stay. tf32 and bf16 use cuBLAS' fast fp32 compute types:
// float in, float out, tensor-core products, fp32 accumulation.
#include <cublas_v2.h>

#include <string>

#include "plugins/compute/cuda_check.h"
#include "plugins/compute/gemm.h"

namespace synk::compute::cuda {
namespace {

cublasComputeType_t computeType(Precision precision) {
  switch (precision) {
    case Precision::Tf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::Bf16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case Precision::Fp32:
      break;
  }
  return CUBLAS_COMPUTE_32F;
}

cublasOperation_t op(Transpose t) {
  return t == Transpose::No ? CUBLAS_OP_N : CUBLAS_OP_T;
}

}  // namespace

void gemm(void* blas, const GemmArgs& g) {
  if (!blas) fail("cuBLAS GEMM", "no cuBLAS handle (compute::Device::blas is null)");
  const cublasStatus_t status = cublasGemmEx(
      static_cast<cublasHandle_t>(blas), op(g.trans_b), op(g.trans_a), static_cast<int>(g.n),
      static_cast<int>(g.m), static_cast<int>(g.k), &g.alpha, g.b, CUDA_R_32F,
      static_cast<int>(g.ldb), g.a, CUDA_R_32F, static_cast<int>(g.lda), &g.beta, g.c, CUDA_R_32F,
      static_cast<int>(g.ldc), computeType(g.precision), CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    fail(("cublasGemmEx (" + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
          std::to_string(g.k) + ", " + precisionName(g.precision) + ")")
             .c_str(),
         cublasGetStatusString(status));
  }
}

}  // namespace synk::compute::cuda
