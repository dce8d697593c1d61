#pragma once
// An owned, growable allocation from a rank's shared-memory heap: host staging memory (pinned
// on the cuda backend, since the backend registers every heap segment).
#include "synk/core/owned_buffer.h"
#include "synk/core/shm_heap.h"

namespace synk {

using HeapBuffer = OwnedBuffer<ShmHeap>;

}  // namespace synk
