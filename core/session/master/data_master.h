#pragma once
// Internal: Data, the master's side: creating a Data array (its blob id from the DataStore),
// checking a Data handle belongs to this session, and a blob's release, which the next step tells
// every rank. The array itself is DataImpl (session/data_impl.h); every rank's mappings are the
// DataStore's (memory/data_store.h).
#include <cstdint>
#include <string>

#include "synk/core/memory/data_store.h"
#include "synk/core/session.h"

namespace synk::detail {

class SessionCore;
class DataImpl;

class DataMaster {
 public:
  DataMaster(SessionCore& core, DataStore& store) : core_(core), store_(store) {}

  Data makeData(DType dtype, const Shape& shape, const DataOptions& options);
  // Checks a Data handle belongs to this session and holds memory.
  const DataImpl& resolve(const Data& data, const std::string& what);
  uint64_t nextBlobId() { return store_.nextBlobId(); }
  // A Data blob went away; the next step tells the ranks to drop their mapping.
  void releaseBlob(uint64_t id) { store_.released(id); }

 private:
  SessionCore& core_;
  DataStore& store_;
};

}  // namespace synk::detail
