#pragma once
// The NCCL stand-in: every NcclApi entry (collectives/cuda/nccl/nccl_api.h), following NCCL 2.28's
// non-blocking contract, with ranks in forked processes and data in host memory. What it models,
// with the NCCL source or documentation line for each behaviour: README.md beside this file.
#include <nccl.h>

#include "synk/collectives/cuda/nccl/nccl_api.h"

namespace synk::standin {

const NcclApi& standinNccl();

// For tests: whether a live stand-in communicator is blocking (false if there is none).
bool isBlocking(ncclComm_t comm);

}  // namespace synk::standin
