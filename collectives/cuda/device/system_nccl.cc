// The system's libnccl as an NcclApi table. Kept apart from nccl_api.cc: this file is the only
// one that names NCCL's functions, and it lives in synk_cuda_device (which links libnccl), so that
// synk_nccl_communicator links without libnccl.
#include "synk/collectives/cuda/nccl/nccl_api.h"

namespace synk {

const NcclApi& systemNccl() {
  static const NcclApi api{
      "NCCL",           ncclGetVersion,
      ncclGetUniqueId,  ncclCommInitRankConfig,
      ncclCommSplit,    ncclCommGetAsyncError,
      ncclCommFinalize, ncclCommDestroy,
      ncclCommAbort,    ncclAllReduce,
      ncclReduce,       ncclBroadcast,
      ncclAllGather,    ncclSend,
      ncclRecv,         ncclGroupStart,
      ncclGroupEnd,     ncclGetErrorString,
      ncclGetLastError, ncclMemAlloc,
      ncclMemFree,      ncclCommWindowRegister,
  };
  return api;
}

}  // namespace synk
