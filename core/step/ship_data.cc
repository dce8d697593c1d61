#include "synk/core/step/ship_data.h"

#include "synk/core/communicator.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"

namespace synk::detail {

StepResult ShipDataHandler::run(ByteReader& payload, Waiter& waiter) {
  StepResult result;
  payload.read(request_);
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
    if (bytes == nullptr) {  // still in the broadcast, which every rank takes part in
      scratch_.resize(ref.bytes);
      bytes = scratch_.data();
    }
    BroadcastArgs args;
    args.buffer = bytes;
    args.count = ref.bytes;
    args.dtype = DType::UInt8;
    args.root = rank_.master_rank;
    rank_.default_communicator->broadcast(args, waiter);
  }
  return result;
}

}  // namespace synk::detail
