#pragma once
// The NCCL entry points NcclCommunicator drives, as a table of C function pointers: the system's
// libnccl in production (systemNccl()), and in CI — where no GPU exists — a stand-in that follows
// NCCL's documented non-blocking contract (tests/support/nccl_standin/). Everything that issues,
// polls, joins, finalizes or aborts an NCCL call goes through this table, so the state machine
// around NCCL's non-blocking API is tested without a GPU, faults included.
#include <nccl.h>

#include <string>

// ncclCommWindowRegister's flag for symmetric kernels (nccl.h from 2.27 on).
#ifndef NCCL_WIN_COLL_SYMMETRIC
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#endif

namespace synk {

struct NcclApi {
  const char* name;  // "NCCL", or the stand-in's name (messages only)
  ncclResult_t (*getVersion)(int* version);
  ncclResult_t (*getUniqueId)(ncclUniqueId* id);
  ncclResult_t (*commInitRankConfig)(ncclComm_t* comm, int n_ranks, ncclUniqueId id, int rank,
                                     ncclConfig_t* config);
  ncclResult_t (*commSplit)(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config);
  ncclResult_t (*commGetAsyncError)(ncclComm_t comm, ncclResult_t* state);
  ncclResult_t (*commFinalize)(ncclComm_t comm);
  ncclResult_t (*commDestroy)(ncclComm_t comm);
  ncclResult_t (*commAbort)(ncclComm_t comm);
  ncclResult_t (*allReduce)(const void* send, void* recv, size_t count, ncclDataType_t type,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*reduce)(const void* send, void* recv, size_t count, ncclDataType_t type,
                         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*broadcast)(const void* send, void* recv, size_t count, ncclDataType_t type,
                            int root, ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*allGather)(const void* send, void* recv, size_t count, ncclDataType_t type,
                            ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*send)(const void* send, size_t count, ncclDataType_t type, int peer,
                       ncclComm_t comm, cudaStream_t stream);
  ncclResult_t (*recv)(void* recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                       cudaStream_t stream);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  const char* (*getErrorString)(ncclResult_t result);
  const char* (*getLastError)(ncclComm_t comm);
  // Symmetric memory: memory a window can hold (NCCL 2.19), and the window's registration (2.27),
  // a collective call of every rank with a buffer of the same size; its handle comes back as a
  // void* (ncclWindow_t, which older headers lack). The system's registration is looked up at
  // run time: against an older libnccl it answers ncclInvalidUsage and windows stay off.
  ncclResult_t (*memAlloc)(void** pointer, size_t bytes);
  ncclResult_t (*memFree)(void* pointer);
  ncclResult_t (*commWindowRegister)(ncclComm_t comm, void* buffer, size_t bytes, void** window,
                                     int flags);
};

// The NCCL library this process linked (libnccl).
const NcclApi& systemNccl();

// "<error string> (code N)[: <last error>]"; `comm` may be null.
std::string describeNccl(const NcclApi& api, ncclResult_t result, ncclComm_t comm);

}  // namespace synk
