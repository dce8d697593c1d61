#include "synk/core/step/ship_data.h"

#include "synk/core/communicator.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk::detail {

StepResult ShipDataHandler::run(ByteReader& payload, Waiter& waiter) {
  StepResult result;
  payload.read(request_);
  // Only the nodes' leaders (the processes that hold the link: the master on node 0) move the
  // blobs, once per node; a node's other ranks read its leader's copy after this step, by name.
  NodeLink* link = rank_.group->link();
  if (link == nullptr) return result;
  if (!leaders_) leaders_ = link->hostCommunicator();
  // The master's node reads the master's blobs; only the other nodes take a copy.
  const bool receives = rank_.group->span().node != 0;
  for (const BlobRef& ref : request_.blobs) {
    std::byte* bytes = nullptr;
    if (rank_.isMaster()) {
      try {
        bytes = store_.blobs().attach(ref);
      } catch (const std::exception& e) {
        result.status = Status::fromException(e);  // the others still take the broadcast
      }
    } else if (receives && result.status.ok()) {
      try {
        bytes = store_.receiveBlob(ref);
      } catch (const std::exception& e) {
        result.status = Status::fromException(e);
      }
    }
    if (bytes == nullptr) {  // still in the broadcast, which every leader takes part in
      scratch_.resize(ref.bytes);
      bytes = scratch_.data();
    }
    BroadcastArgs args;
    args.buffer = bytes;
    args.count = ref.bytes;
    args.dtype = DType::UInt8;
    args.root = 0;  // the leaders' communicator: rank = node, the master's is node 0
    leaders_->broadcast(args, waiter);
  }
  return result;
}

}  // namespace synk::detail
