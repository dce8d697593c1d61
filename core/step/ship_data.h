#pragma once
// Internal: ship data, the step that copies the master's Data blobs into the shared memory of the
// other nodes of a session over several nodes (cluster/README.md), so that their ranks read a
// call's inputs there as the master's node reads them in the master's. Another node's leader
// receives into a segment of its own node named as the master names it (the same id and
// generation under its node's prefix: BlobCache finds it, on each rank of that node), replacing
// an older generation's; the other ranks take no part. Two ways:
//  - whole blobs (`blobs`: what every rank reads whole): the node leaders' broadcast (the link's
//    host communicator);
//  - rows (`rows`: a call's scattered input or a scatter's source, of which a node's ranks read
//    only their shares; a set_value's source, which one rank reads): the
//    master sends node k's leader alone the rows its ranks read and it lacks
//    (NodeLeaders::send), in chunks of at most kShipChunkBytes, each the ranges (as row numbers)
//    then their rows; the leader writes them at their offsets. A segment holds only the rows
//    shipped to it (shared memory is allocated as written), so a node's memory and the bytes
//    between nodes follow what its ranks read. The ranges, known on the master only
//    (DataStore::rowsToShip), travel with the rows: the step's payload stays small.
// The master runs it before a step that reads a version of a Data, or rows of one, that another
// node lacks (DataMaster::shipCallInputs, shipSources).
#include <memory>
#include <vector>

#include "synk/core/memory/blob.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

// Rows of a blob one node's leader receives (the ranges come with them).
struct ShipRows {
  BlobRef blob;
  int32_t node = 0;
  uint64_t row_bytes = 0;

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.blob, self.node, self.row_bytes);
  }
};

struct ShipRequest {
  std::vector<BlobRef> blobs;  // whole, to every node
  // Per blob, of its first entries: the bytes to send, where only the start is used (a command's
  // payload blob, larger than the payload); the others go whole.
  std::vector<uint64_t> lengths;
  std::vector<ShipRows> rows;  // some rows, to one node each

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.blobs, self.lengths, self.rows);
  }
};

// The most bytes of rows one message of the rows' shipping carries.
constexpr size_t kShipChunkBytes = size_t{64} << 20;

class ShipDataHandler final : public StepHandler {
 public:
  ShipDataHandler(const RankResources& rank, DataStore& store) : rank_(rank), store_(store) {}
  StepResult run(ByteReader& payload, Waiter& waiter) override;

 private:
  // The master's side of request_.rows[entry], and the receiving leader's.
  void sendRows(size_t entry, StepResult& result, Waiter& waiter);
  void receiveRows(const ShipRows& rows, StepResult& result, Waiter& waiter);

  const RankResources& rank_;
  DataStore& store_;
  ShipRequest request_;             // read into, reused
  std::vector<std::byte> scratch_;  // a blob this rank has no segment for (it failed to make one)
  std::unique_ptr<Communicator> leaders_;  // the node leaders' collectives, on a leader
};

}  // namespace synk::detail
