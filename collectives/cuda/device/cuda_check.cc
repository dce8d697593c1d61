#include "synk/collectives/cuda/device/cuda_check.h"

#include <cstring>

#include "synk/collectives/cuda/nccl/nccl_api.h"
#include "synk/core/error.h"

namespace synk::cuda_detail {
namespace {

// Just the file name: full build paths make messages long without helping.
const char* baseName(const char* file) {
  const char* slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

}  // namespace

void throwCudaFailure(const char* file, int line, const char* expr, cudaError_t err) {
  // Clears the runtime's "last error" when it is not sticky, so a later cudaGetLastError() (kernel
  // launch checks) does not report this failure a second time against another call.
  (void)cudaGetLastError();
  throw CudaError(str(expr, " failed at ", baseName(file), ":", line, ": ", cudaGetErrorString(err),
                      " (", cudaGetErrorName(err), " = ", static_cast<int>(err), ")"));
}

void throwCublasFailure(const char* file, int line, const char* expr, cublasStatus_t status) {
  throw CudaError(str(expr, " failed at ", baseName(file), ":", line, ": ",
                      cublasGetStatusString(status), " (", cublasGetStatusName(status), " = ",
                      static_cast<int>(status), ")"));
}

std::string describeNccl(ncclResult_t result, ncclComm_t comm) {
  return ::synk::describeNccl(systemNccl(), result, comm);
}

void throwNcclFailure(const char* file, int line, const char* expr, ncclResult_t result,
                      ncclComm_t comm) {
  throw NcclError(
      str(expr, " failed at ", baseName(file), ":", line, ": ", describeNccl(result, comm)));
}

}  // namespace synk::cuda_detail
