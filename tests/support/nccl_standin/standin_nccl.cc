// The stand-in's NcclApi entries. Each says which NCCL 2.28 behaviour it follows (src/init.cc
// unless named otherwise); README.md beside this file lists them with their sources.
#include "tests/support/nccl_standin/standin_nccl.h"

#include <algorithm>
#include <cstdlib>

#include "synk/core/error.h"
#include "tests/support/nccl_standin/standin_calls.h"

namespace synk::standin {
namespace {

ncclResult_t getVersion(int* version) {
  if (version == nullptr) return refuse(ncclInvalidArgument, "ncclGetVersion: null version");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t getUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return refuse(ncclInvalidArgument, "ncclGetUniqueId: null id");
  try {
    Segment::create(id);
  } catch (const std::exception& e) {
    return refuse(ncclSystemError, str("ncclGetUniqueId: ", e.what()));
  }
  return ncclSuccess;
}

// The handle is written at once and the init completes as a job (ncclCommInitRankDev writes
// *newcomm before ncclAsyncLaunch); non-blocking: ncclInProgress.
ncclResult_t commInitRankConfig(ncclComm_t* newcomm, int n_ranks, ncclUniqueId id, int rank,
                                ncclConfig_t* config) {
  if (newcomm == nullptr) return refuse(ncclInvalidArgument, "ncclCommInitRankConfig: null comm");
  *newcomm = nullptr;
  if (n_ranks < 1 || n_ranks > kMaxRanks || rank < 0 || rank >= n_ranks) {
    return refuse(ncclInvalidArgument, str("ncclCommInitRankConfig: rank ", rank, " of ", n_ranks,
                                           " (the stand-in holds up to ", kMaxRanks, ")"));
  }
  // NCCL_CONFIG_INITIALIZER leaves blocking undefined, which means blocking.
  const bool blocking =
      config == nullptr || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
  auto comm = std::make_shared<Comm>(blocking, rank, n_ranks, rank);
  registerComm(comm);
  *newcomm = comm->handle();
  resetCollectiveCount();
  record(rank).inits.fetch_add(1);
  Comm* c = comm.get();
  return comm->run([c, id] { return initJob(*c, id); });
}

// Under a non-blocking parent the split is a job of the parent and ncclCommSplit returns
// ncclSuccess while it runs: ncclGroupEndInternal answers ncclInProgress, which NCCLCHECK lets
// through and the split does not return. *newcomm is NULL until the job writes it
// (ncclCommInitChildComm: "*newcomm should be NCCL_COMM_NULL until comm split fully complete").
ncclResult_t commSplit(ncclComm_t handle, int color, int key, ncclComm_t* newcomm,
                       ncclConfig_t* config) {
  const std::shared_ptr<Comm> parent = findComm(handle);
  if (!parent) return unknownComm("ncclCommSplit", handle);
  if (newcomm == nullptr) return refuse(ncclInvalidArgument, "ncclCommSplit: null newcomm");
  if (ncclResult_t ready = parent->ensureReady(false); ready != ncclSuccess) return ready;
  *newcomm = nullptr;
  // The child is configured by `config`, else inherits the parent's (copyCommConfig).
  const bool blocking = config != nullptr && config->blocking != NCCL_CONFIG_UNDEF_INT
                            ? config->blocking != 0
                            : parent->blocking;
  record(parent->world_rank).splits.fetch_add(1);
  Comm* p = parent.get();
  const ncclResult_t started = parent->run(
      [p, color, key, newcomm, blocking] { return splitJob(*p, color, key, newcomm, blocking); });
  if (started != ncclInProgress) return started;
  record(parent->world_rank).split_returned_while_running.fetch_add(1);
  return ncclSuccess;
}

ncclResult_t commGetAsyncError(ncclComm_t handle, ncclResult_t* state) {
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm("ncclCommGetAsyncError", handle);
  if (state == nullptr) return refuse(ncclInvalidArgument, "ncclCommGetAsyncError: null state");
  *state = comm->state();  // joins a job that ended
  return ncclSuccess;
}

// ncclCommEnsureReady first (a refusal becomes the state), once only, then a job that flushes
// this rank's operations on the communicator; non-blocking: ncclInProgress.
ncclResult_t commFinalize(ncclComm_t handle) {
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm("ncclCommFinalize", handle);
  if (ncclResult_t ready = comm->ensureReady(true); ready != ncclSuccess) return ready;
  if (comm->finalized.exchange(true)) {
    return refuse(ncclInvalidArgument, "ncclCommFinalize: finalized twice");
  }
  record(comm->world_rank).finalizes.fetch_add(1);
  comm->checkTeardown("ncclCommFinalize");
  Comm* c = comm.get();
  const ncclResult_t started = comm->run([c] { return finalizeJob(*c); });
  if (started == ncclInProgress) record(comm->world_rank).finalize_in_progress.fetch_add(1);
  return started;
}

// ncclCommEnsureReady (an error state is returned as is); without a finalize it flushes inline,
// as NCCL's commReclaim does; then the handle is freed.
ncclResult_t commDestroy(ncclComm_t handle) {
  if (handle == nullptr) return ncclSuccess;
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm("ncclCommDestroy", handle);
  if (ncclResult_t ready = comm->ensureReady(false); ready != ncclSuccess) return ready;
  record(comm->world_rank).destroys.fetch_add(1);
  comm->checkTeardown("ncclCommDestroy");
  if (!comm->finalized.load()) {
    if (ncclResult_t flushed = waitOwnOps(*comm); flushed != ncclSuccess) return flushed;
  }
  unregisterComm(comm.get());
  return ncclSuccess;
}

// The abort flag stops the job and every operation of the communicator; the job is joined
// (ncclCommEnsureReady under the abort flag: ncclGroupJobAbort), peers are never waited for.
ncclResult_t commAbort(ncclComm_t handle) {
  if (handle == nullptr) return ncclSuccess;
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm("ncclCommAbort", handle);
  record(comm->world_rank).aborts.fetch_add(1);
  comm->abort();  // first: the job it joins may still be attaching the segment
  comm->checkTeardown("ncclCommAbort");
  unregisterComm(comm.get());
  return ncclSuccess;
}

ncclResult_t allReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return issue(OpKind::AllReduce, "ncclAllReduce", send, recv, count, type, op, 0, comm, stream);
}

ncclResult_t reduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                    int root, ncclComm_t comm, cudaStream_t stream) {
  return issue(OpKind::Reduce, "ncclReduce", send, recv, count, type, op, root, comm, stream);
}

ncclResult_t broadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root,
                       ncclComm_t comm, cudaStream_t stream) {
  return issue(OpKind::Broadcast, "ncclBroadcast", send, recv, count, type, ncclSum, root, comm,
               stream);
}

ncclResult_t allGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                       ncclComm_t comm, cudaStream_t stream) {
  return issue(OpKind::AllGather, "ncclAllGather", send, recv, count, type, ncclSum, 0, comm,
               stream);
}

ncclResult_t send(const void* buffer, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                  cudaStream_t stream) {
  return issue(OpKind::Send, "ncclSend", buffer, nullptr, count, type, ncclSum, peer, comm, stream);
}

ncclResult_t recv(void* buffer, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                  cudaStream_t stream) {
  return issue(OpKind::Recv, "ncclRecv", nullptr, buffer, count, type, ncclSum, peer, comm, stream);
}

// NCCL's own strings (ncclGetErrorString), so messages read the same as on a GPU.
const char* getErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

// Process-wide and never cleared, as NCCL's ("comm is currently unused").
const char* getLastError(ncclComm_t) {
  return lastError();
}

// ncclMemAlloc: device memory for windows; here host memory (the stand-in device's).
ncclResult_t memAlloc(void** pointer, size_t bytes) {
  if (pointer == nullptr) return refuse(ncclInvalidArgument, "ncclMemAlloc: null pointer");
  *pointer = std::aligned_alloc(4096, (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096);
  return *pointer != nullptr ? ncclSuccess : refuse(ncclSystemError, "ncclMemAlloc: no memory");
}

ncclResult_t memFree(void* pointer) {
  std::free(pointer);
  return ncclSuccess;
}

// ncclCommWindowRegister (src/register/register.cc): collective over the communicator; a
// non-blocking one would run it as a job. The stand-in records the window on the communicator
// (collectives then count their window operations) and takes blocking communicators only: synk
// registers on its blocking windows communicator.
ncclResult_t commWindowRegister(ncclComm_t handle, void* buffer, size_t bytes, void** window,
                                int flags) {
  const std::shared_ptr<Comm> comm = findComm(handle);
  if (!comm) return unknownComm("ncclCommWindowRegister", handle);
  if (buffer == nullptr || window == nullptr || bytes == 0) {
    return refuse(ncclInvalidArgument, "ncclCommWindowRegister: null buffer or window, or 0 bytes");
  }
  if (ncclResult_t ready = comm->ensureReady(true); ready != ncclSuccess) return ready;
  if (!comm->blocking) {
    recordViolation(
        "ncclCommWindowRegister on a non-blocking communicator (synk registers on "
        "its blocking windows communicator)");
  }
  if (flags != NCCL_WIN_COLL_SYMMETRIC) {
    return refuse(ncclInvalidArgument, str("ncclCommWindowRegister: flags ", flags));
  }
  comm->windows.emplace_back(reinterpret_cast<uintptr_t>(buffer), bytes);
  record(comm->world_rank).window_registrations.fetch_add(1);
  *window = reinterpret_cast<void*>(comm->windows.size());
  return ncclSuccess;
}

}  // namespace

const NcclApi& standinNccl() {
  static const NcclApi api{
      "NCCL stand-in", getVersion,  getUniqueId, commInitRankConfig, commSplit, commGetAsyncError,
      commFinalize,    commDestroy, commAbort,   allReduce,          reduce,    broadcast,
      allGather,       send,        recv,        groupStart,         groupEnd,  getErrorString,
      getLastError,    memAlloc,    memFree,     commWindowRegister,
  };
  return api;
}

bool isBlocking(ncclComm_t handle) {
  const std::shared_ptr<Comm> comm = findComm(handle);
  return comm && comm->blocking;
}

}  // namespace synk::standin
