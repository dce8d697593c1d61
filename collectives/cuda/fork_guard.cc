#include "synk/collectives/cuda/fork_guard.h"

#include <cuda.h>  // CUresult values only: nothing is linked
#include <dlfcn.h>

#include "synk/core/error.h"

namespace synk {

CudaInitReport cudaInitStateOfThisProcess() {
  CudaInitReport report;
  void* lib = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  if (lib == nullptr) return report;  // never loaded: nothing can be initialised
  using GetCount = CUresult (*)(int*);
  auto get_count = reinterpret_cast<GetCount>(dlsym(lib, "cuDeviceGetCount"));
  if (get_count == nullptr) {
    report.state = CudaInitState::Initialised;  // cannot tell: be safe
    report.detail = "libcuda.so.1 is loaded but exports no cuDeviceGetCount";
  } else {
    int count = 0;
    const CUresult rc = get_count(&count);
    if (rc == CUDA_ERROR_NOT_INITIALIZED) {
      report.state = CudaInitState::LoadedNotInitialised;
      report.detail = "libcuda.so.1 is loaded, cuInit has not run";
    } else {
      report.state = CudaInitState::Initialised;
      report.detail = rc == CUDA_SUCCESS
                          ? str("cuDeviceGetCount answers ", count, " device(s)")
                          : str("cuDeviceGetCount returns CUresult ", static_cast<int>(rc));
    }
  }
  dlclose(lib);  // drops the reference RTLD_NOLOAD took
  return report;
}

void checkCudaNotInitialisedBeforeFork() {
  const CudaInitReport report = cudaInitStateOfThisProcess();
  if (report.state != CudaInitState::Initialised) return;
  throw UsageError(str(
      "CUDA was initialised in this process before synk::fork(); fork before any CUDA call, "
      "because CUDA state does not survive fork() and the ranks could not use their GPUs. "
      "Move the first CUDA call (cudaSetDevice, cudaMalloc, creating a cuBLAS handle, loading a "
      "library that initialises CUDA) after synk::fork(), or use backend \"cpu\". (",
      report.detail, ")"));
}

}  // namespace synk
