#include "collectives/cuda/nccl_api.h"

#include "core/error.h"

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
      ncclGetLastError,
  };
  return api;
}

std::string describeNccl(const NcclApi& api, ncclResult_t result, ncclComm_t comm) {
  std::string text = str(api.getErrorString(result), " (code ", static_cast<int>(result), ")");
  const char* last = api.getLastError(comm);
  if (last != nullptr && last[0] != '\0') text += str(": ", last);
  return text;
}

}  // namespace synk
