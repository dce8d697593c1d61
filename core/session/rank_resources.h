#pragma once
// Internal: what a step's handler may use on its rank: its place in the session and the resources
// its backend gave it. The session fills it once the rank's backend has started; handlers hold a
// reference to it, never to the session.
#include "synk/core/backend.h"
#include "synk/core/memory/blob.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"

namespace synk::detail {

struct RankResources {
  int rank = 0;
  int size = 1;
  int master_rank = 0;
  ProcessGroup* group = nullptr;
  Device* device = nullptr;
  ShmHeap* heap = nullptr;
  BlobCache* blobs = nullptr;
  Backend* backend = nullptr;
  // The runtime's own collectives (outputs, distribute, models' in-call all_reduce): native
  // where the session has it, host-staged where ranks share a GPU.
  Communicator* default_communicator = nullptr;

  bool isMaster() const { return rank == master_rank; }
  Barrier& barrier() const { return group->barrier(); }
  // Throws UsageError for native = true on a session without native collectives.
  Communicator& communicator(bool native) const { return backend->communicator(native); }
};

}  // namespace synk::detail
