#pragma once
// Internal: ship data, the step that copies the master's Data blobs into the shared memory of the
// other nodes of a session over several nodes (cluster/README.md), so that their ranks read a
// call's inputs there as the master's node reads them in the master's. The master sends each
// blob whole with the node leaders' broadcast (the link's host communicator); another node's
// leader receives it into a segment of its own node named as the master names it (the same id and
// generation under its node's prefix: BlobCache finds it, on each rank of that node), replacing
// an older generation's; the other ranks take no part. The
// master runs it before a step that reads a version of a Data no other node has yet
// (DataMaster::shipAcrossNodes).
#include <memory>
#include <vector>

#include "synk/core/memory/blob.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

struct ShipRequest {
  std::vector<BlobRef> blobs;

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.blobs);
  }
};

class ShipDataHandler final : public StepHandler {
 public:
  ShipDataHandler(const RankResources& rank, DataStore& store) : rank_(rank), store_(store) {}
  StepResult run(ByteReader& payload, Waiter& waiter) override;

 private:
  const RankResources& rank_;
  DataStore& store_;
  ShipRequest request_;             // read into, reused
  std::vector<std::byte> scratch_;  // a blob this rank has no segment for (it failed to make one)
  std::unique_ptr<Communicator> leaders_;  // the node leaders' collectives, on a leader
};

}  // namespace synk::detail
