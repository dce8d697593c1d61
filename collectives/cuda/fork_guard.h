#pragma once
// The fork guard of the CUDA backend: CUDA state does not survive fork() (CUDA C++ guidelines,
// rule CUDA-1.6; ../shared/notes/research-reliability.md section 3), so the master must not have
// initialised CUDA when it forks the ranks.
//
// Method (never initialises CUDA itself): dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW) returns
// the driver library only if this process already loaded it (glibc matches the soname, so a
// runtime that loaded it under another path is found too). Not loaded: CUDA cannot have been
// initialised. Loaded: ask its cuDeviceGetCount, which returns CUDA_ERROR_NOT_INITIALIZED until
// cuInit has run; anything else means the driver was (or tried to be) initialised here.
#include <string>

namespace synk {

enum class CudaInitState { NotLoaded, LoadedNotInitialised, Initialised };

struct CudaInitReport {
  CudaInitState state = CudaInitState::NotLoaded;
  std::string detail;  // what cuDeviceGetCount answered, for the message
};

CudaInitReport cudaInitStateOfThisProcess();

// Throws UsageError when CUDA was initialised in this process.
void checkCudaNotInitialisedBeforeFork();

}  // namespace synk
