#pragma once
// The "nccl-standin" backend: per rank a StandinDevice and the real NcclCommunicator
// (collectives/cuda/nccl/nccl_communicator.h) driving the NCCL stand-in, so the conformance checks
// and fault tests run synk's NCCL code path in CI, without a GPU. communicator(true) is the
// NcclCommunicator; there is no host-staged communicator.
//
// Before forking, the factory creates the stand-in's ledger (standin_faults.h) so that every rank
// shares it; a test scripts faults with standin::configure() before it launches the ranks. When a
// rank's backend is gone, its ledger record says how many stand-in threads and communicators were
// still alive.
#include <memory>

#include "synk/core/backend.h"

namespace synk::standin {

std::unique_ptr<BackendFactory> makeNcclStandinBackendFactory();

}  // namespace synk::standin
