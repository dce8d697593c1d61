// gemm() on cublasGemmEx: the operands swap (row-major as column-major, cuda_blas_types.h).
#include <cublas_v2.h>

#include <string>

#include "synk/plugins/compute/cuda/cuda_blas_types.h"
#include "synk/plugins/compute/cuda/cuda_check.h"
#include "synk/plugins/compute/gemm.h"

namespace synk::compute::cuda {

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
