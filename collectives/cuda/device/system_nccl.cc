// The system's libnccl as an NcclApi table. Kept apart from nccl_api.cc: this file is the only
// one that names NCCL's functions, and it lives in synk_cuda_device (which links libnccl), so that
// synk_nccl_communicator links without libnccl.
#include <dlfcn.h>

#include "synk/collectives/cuda/nccl/nccl_api.h"

namespace synk {
namespace {

// ncclCommWindowRegister came with NCCL 2.27. Looked up in the process (then in the loaded
// libnccl, found through ncclGetVersion's address) rather than linked, so that the backend still
// loads against an older library; windows are then off (NcclCommunicator checks the version).
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
ncclResult_t windowRegister(ncclComm_t comm, void* buffer, size_t bytes, void** window, int flags) {
  using Register = ncclResult_t (*)(ncclComm_t, void*, size_t, ncclWindow_t*, int);
  static const Register lookedUp = []() -> Register {
    if (void* found = dlsym(RTLD_DEFAULT, "ncclCommWindowRegister")) {
      return reinterpret_cast<Register>(found);
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) == 0) return nullptr;
    void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return nullptr;
    return reinterpret_cast<Register>(dlsym(library, "ncclCommWindowRegister"));
  }();
  if (lookedUp == nullptr) return ncclInvalidUsage;
  ncclWindow_t handle = nullptr;
  const ncclResult_t result = lookedUp(comm, buffer, bytes, &handle, flags);
  *window = handle;
  return result;
}
#endif

}  // namespace

const NcclApi& systemNccl() {
  static const NcclApi api {
    "NCCL", ncclGetVersion, ncclGetUniqueId, ncclCommInitRankConfig, ncclCommSplit,
        ncclCommGetAsyncError, ncclCommFinalize, ncclCommDestroy, ncclCommAbort, ncclAllReduce,
        ncclReduce, ncclBroadcast, ncclAllGather, ncclSend, ncclRecv, ncclGroupStart, ncclGroupEnd,
        ncclGetErrorString, ncclGetLastError, ncclMemAlloc, ncclMemFree,
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
        windowRegister,
#else
        nullptr,  // headers without windows: none
#endif
  };
  return api;
}

}  // namespace synk
