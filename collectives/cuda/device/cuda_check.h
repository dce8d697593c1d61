#pragma once
// Check wrappers for the foreign APIs of the CUDA backend (STYLE.md, "Errors": one wrapper per
// foreign API). Each throws the matching synk exception with the call's text, file:line and the
// library's own description of the code, so a failure on rank 3 of 8 reads on its own:
//   "cudaMemcpyAsync(...) failed at nccl_communicator.cc:120: an illegal memory access was
//    encountered (cudaErrorIllegalAddress = 700)".
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace synk::cuda_detail {

[[noreturn]] void throwCudaFailure(const char* file, int line, const char* expr, cudaError_t err);
[[noreturn]] void throwCublasFailure(const char* file, int line, const char* expr,
                                     cublasStatus_t status);
// `comm` may be null (ncclGetLastError then reports the thread's last error).
[[noreturn]] void throwNcclFailure(const char* file, int line, const char* expr,
                                   ncclResult_t result, ncclComm_t comm);
// "<ncclGetErrorString> (code N)[: <ncclGetLastError>]".
std::string describeNccl(ncclResult_t result, ncclComm_t comm);

}  // namespace synk::cuda_detail

// CUDA runtime calls returning cudaError_t: throw CudaError on anything but cudaSuccess.
#define SYNK_CUDA_CHECK(expr)                                                           \
  do {                                                                                  \
    const cudaError_t synk_cuda_err_ = (expr);                                          \
    if (synk_cuda_err_ != cudaSuccess) {                                                \
      ::synk::cuda_detail::throwCudaFailure(__FILE__, __LINE__, #expr, synk_cuda_err_); \
    }                                                                                   \
  } while (0)

// cuBLAS calls: throw CudaError on anything but CUBLAS_STATUS_SUCCESS.
#define SYNK_CUBLAS_CHECK(expr)                                                                \
  do {                                                                                         \
    const cublasStatus_t synk_cublas_status_ = (expr);                                         \
    if (synk_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                        \
      ::synk::cuda_detail::throwCublasFailure(__FILE__, __LINE__, #expr, synk_cublas_status_); \
    }                                                                                          \
  } while (0)

// NCCL calls that must return ncclSuccess (never ncclInProgress: calls on a non-blocking
// communicator go through NcclCommunicator::complete instead). Throws NcclError.
#define SYNK_NCCL_CHECK(expr)                                                             \
  do {                                                                                    \
    const ncclResult_t synk_nccl_result_ = (expr);                                        \
    if (synk_nccl_result_ != ncclSuccess) {                                               \
      ::synk::cuda_detail::throwNcclFailure(__FILE__, __LINE__, #expr, synk_nccl_result_, \
                                            nullptr);                                     \
    }                                                                                     \
  } while (0)
