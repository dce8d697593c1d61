#pragma once
// Small all-to-all exchanges through the control block: each rank publishes a few bytes (its
// shapes, row counts, ok flag) at one barrier and reads everyone's. This is how ranks agree on
// per-rank facts before a collective (fingerprints, variable-length gathers) at the cost of one
// barrier, microseconds on shared memory.
#include <vector>

#include "synk/core/barrier.h"
#include "synk/core/byte_io.h"

namespace synk {

struct ExchangeResult {
  bool all_ok = true;
  std::vector<ByteReader> from;  // one per rank; valid until the second barrier after this one
};

// Throws InternalError if `mine` does not fit the exchange area (kExchangeBytes).
ExchangeResult exchange(Barrier& barrier, Waiter& waiter, bool ok, const ByteWriter& mine);

}  // namespace synk
