// describeNccl, part of synk_nccl_communicator (systemNccl() is in device/system_nccl.cc, in
// synk_cuda_device).
#include "synk/collectives/cuda/nccl/nccl_api.h"

#include "synk/core/error.h"

namespace synk {

std::string describeNccl(const NcclApi& api, ncclResult_t result, ncclComm_t comm) {
  std::string text = str(api.getErrorString(result), " (code ", static_cast<int>(result), ")");
  const char* last = api.getLastError(comm);
  if (last != nullptr && last[0] != '\0') text += str(": ", last);
  return text;
}

}  // namespace synk
