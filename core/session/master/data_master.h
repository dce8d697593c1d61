#pragma once
// Internal: Data, the master's side: creating a Data array (its blob id from the DataStore),
// checking a Data handle belongs to this session, and a blob's release, which the next step tells
// every rank. The array itself is DataImpl (session/data_impl.h); every rank's mappings are the
// DataStore's (memory/data_store.h).
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/session.h"
#include "synk/core/step/call_request.h"
#include "synk/core/step/ship_data.h"

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
  void releaseBlob(uint64_t id) {
    store_.released(id);
    shipped_.erase(id);
  }
  // On several nodes: before a step reads Data on other nodes, the ship-data step
  // (step/ship_data.h) copies into their shared memory what they lack of it at its generation and
  // version: for a call's inputs (`data[i]` is request.inputs[i]'s, `broadcast[i]` its binding),
  // an input the ranks read whole goes whole; of a scattered one each node gets only the rows its
  // ranks' shares read (the call's batch split over the ranks). Writes through Data::view() do
  // not change the version: after them, setValue (or set) again, as for a device-resident Data.
  void shipCallInputs(const std::vector<const DataImpl*>& data, const CallRequest& request,
                      const std::vector<uint8_t>& broadcast);
  // The same for a collective's sources, read by rows of `batch`: each rank its share (scatter,
  // `reader` < 0) or rank `reader` all of them (set_value).
  void shipSources(const std::vector<const DataImpl*>& sources, const Selection& batch, int reader);

 private:
  SessionCore& core_;
  DataStore& store_;
  struct Shipped {
    uint64_t generation = 0;
    uint64_t version = 0;
    bool whole = false;         // every node holds all of it
    std::vector<RowSet> nodes;  // else: the rows each node holds (node 0's unused)
  };
  // What the other nodes hold of `ref` at `version` (reset when either changed).
  Shipped& heldOf(const BlobRef& ref, uint64_t version);
  // Building one ship-data step: start, add what each Data needs, run (when it lists anything).
  void startShip();
  bool listedWhole(uint64_t id) const;
  // `d` whole to every node that lacks it.
  void addWhole(const DataImpl& d);
  // To each other node the rows of `d` it lacks at positions(node) of `batch` (row =
  // batch.rowAt(position) - offset); nothing for a Data that goes whole.
  void addRows(const DataImpl& d, const Selection& batch, int64_t offset,
               const std::function<RowRange(int node)>& positions);
  // The positions node k's ranks read of `rows` split over the session's ranks.
  std::function<RowRange(int)> sharesOfNodes(int64_t rows);
  // Runs the ship-data step for request_ (and rows(), on the master only) when it lists anything.
  void runShip();
  // Per request_.rows entry, the rows it sends: the store's, which the master's handler reads.
  std::vector<RowSet>& rows() { return store_.rowsToShip(); }
  std::unordered_map<uint64_t, Shipped> shipped_;  // by blob id: what the other nodes hold
  ShipRequest request_;                            // reused
  ByteWriter payload_;                             // reused
};

}  // namespace synk::detail
