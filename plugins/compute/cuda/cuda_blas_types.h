#pragma once
// Private to plugins/compute's cuBLAS and cuBLASLt sources: the library's enums for ours. A
// row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so callers swap the
// operands and keep the transposes.
#include <cublas_api.h>

#include "synk/plugins/compute/gemm.h"

namespace synk::compute::cuda {

// tf32 and bf16: cuBLAS' fast fp32 compute types (float in and out, tensor-core products, fp32
// accumulation).
inline cublasComputeType_t computeType(Precision precision) {
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

inline cublasOperation_t op(Transpose t) {
  return t == Transpose::No ? CUBLAS_OP_N : CUBLAS_OP_T;
}

}  // namespace synk::compute::cuda
