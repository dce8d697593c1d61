#pragma once
// The work behind the stand-in's NcclApi entries (standin_nccl.cc): the jobs of init, split and
// finalize, the issue of collectives and point-to-point operations, and ncclGroupStart/End.
#include <nccl.h>

#include <string>

#include "tests/support/nccl_standin/standin_comm.h"
#include "tests/support/nccl_standin/standin_ops.h"

namespace synk::standin {

// Sets the last error ("nccl-standin: <why>") and, inside a group, the group's error; returns
// `result`.
ncclResult_t refuse(ncclResult_t result, const std::string& why);
// A call on a handle that is not a live communicator: a violation, and ncclInvalidArgument.
ncclResult_t unknownComm(const char* call, ncclComm_t comm);

// Jobs (run by Comm::run: on a job thread, or inline for a blocking communicator).
// init: attach the id's segment and wait for every rank.
ncclResult_t initJob(Comm& comm, const ncclUniqueId& id);
// split: meet the parent's ranks, create the child, and — last — write it into `slot`.
ncclResult_t splitJob(Comm& parent, int color, int key, ncclComm_t* slot, bool blocking);
// finalize: wait until every operation this rank queued on the communicator is done.
ncclResult_t finalizeJob(Comm& comm);
ncclResult_t waitOwnOps(Comm& comm);

// A collective or send/recv: checked, then grouped or launched (queued on the stream by a
// blocking communicator, by a job on a non-blocking one).
ncclResult_t issue(OpKind kind, const char* call, const void* send, void* recv, size_t count,
                   ncclDataType_t type, ncclRedOp_t redop, int peer, ncclComm_t comm,
                   cudaStream_t stream);
// Fault::index counts collective calls from the creation of the process's last communicator.
void resetCollectiveCount();
ncclResult_t groupStart();
ncclResult_t groupEnd();

}  // namespace synk::standin
