#include "synk/core/step/ship_data.h"

#include <algorithm>
#include <cstring>

#include "synk/core/communicator.h"
#include "synk/core/error.h"
#include "synk/core/node_span.h"
#include "synk/core/process_group.h"

namespace synk::detail {
namespace {

// One message of a node's rows: this header, then (its own message) the ranges as row numbers and
// the rows, one after the other.
struct ChunkHeader {
  uint64_t ranges;
  uint64_t row_bytes;  // the rows' bytes after the ranges
  uint64_t last;       // 1 on the entry's last chunk
};

NodeLeaders::Bytes bytesOf(size_t n) {
  return std::make_shared<std::vector<std::byte>>(n);
}

NodeLeaders& leadersOf(Communicator& communicator) {
  auto* leaders = dynamic_cast<NodeLeaders*>(&communicator);
  if (leaders == nullptr) {
    throw InternalError("ship data: the link's host communicator has no point-to-point sends");
  }
  return *leaders;
}

}  // namespace

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
  for (size_t k = 0; k < request_.blobs.size(); ++k) {
    const BlobRef& ref = request_.blobs[k];
    const uint64_t length = k < request_.lengths.size() ? request_.lengths[k] : ref.bytes;
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
      scratch_.resize(length);
      bytes = scratch_.data();
    }
    BroadcastArgs args;
    args.buffer = bytes;
    args.count = length;
    args.dtype = DType::UInt8;
    args.root = 0;  // the leaders' communicator: rank = node, the master's is node 0
    leaders_->broadcast(args, waiter);
  }
  for (size_t entry = 0; entry < request_.rows.size(); ++entry) {
    if (rank_.isMaster()) {
      sendRows(entry, result, waiter);
    } else if (request_.rows[entry].node == rank_.group->span().node) {
      receiveRows(request_.rows[entry], result, waiter);
    }
  }
  return result;
}

void ShipDataHandler::sendRows(size_t entry, StepResult& result, Waiter& waiter) {
  const ShipRows& rows = request_.rows[entry];
  NodeLeaders& leaders = leadersOf(*leaders_);
  const std::byte* base = nullptr;
  const std::vector<RowRange>* ranges = nullptr;  // null: nothing (more) to send
  if (result.status.ok()) {
    try {
      base = store_.blobs().attach(rows.blob);
      ranges = &store_.rowsToShip().at(entry).ranges();
    } catch (const std::exception& e) {
      result.status = Status::fromException(e);
    }
  }
  const int64_t chunk_rows = std::max<int64_t>(
      1, static_cast<int64_t>(kShipChunkBytes / std::max<uint64_t>(rows.row_bytes, 1)));
  size_t next = 0;     // the range the next chunk starts in
  int64_t offset = 0;  // rows of it already sent
  bool last = false;
  while (!last) {
    // Each chunk's body is built before its header goes: a failure here sends an empty last
    // chunk instead, so the receiver, which waits for a last one, is never left inside MPI.
    ChunkHeader header{0, 0, 1};
    NodeLeaders::Bytes body = bytesOf(0);
    if (ranges != nullptr) {
      try {
        std::vector<RowRange> chunk;
        int64_t taken = 0;
        while (next < ranges->size() && taken < chunk_rows) {
          const RowRange& r = (*ranges)[next];
          const int64_t n = std::min(r.size() - offset, chunk_rows - taken);
          chunk.push_back({r.begin + offset, r.begin + offset + n});
          taken += n;
          offset += n;
          if (offset == r.size()) {
            ++next;
            offset = 0;
          }
        }
        const uint64_t row_bytes = static_cast<uint64_t>(taken) * rows.row_bytes;
        body = bytesOf(chunk.size() * sizeof(RowRange) + row_bytes);
        std::byte* at = body->data();
        std::memcpy(at, chunk.data(), chunk.size() * sizeof(RowRange));
        at += chunk.size() * sizeof(RowRange);
        for (const RowRange& r : chunk) {
          const size_t bytes = static_cast<size_t>(r.size()) * rows.row_bytes;
          std::memcpy(at, base + static_cast<size_t>(r.begin) * rows.row_bytes, bytes);
          at += bytes;
        }
        header = {chunk.size(), row_bytes, next == ranges->size() ? 1u : 0u};
      } catch (const std::exception& e) {
        result.status = Status::fromException(e);
        body = bytesOf(0);
      }
    }
    last = header.last != 0;
    NodeLeaders::Bytes head = bytesOf(sizeof header);
    std::memcpy(head->data(), &header, sizeof header);
    leaders.send(head, rows.node, waiter);
    leaders.send(body, rows.node, waiter);  // nothing at all when empty, on both sides
  }
}

void ShipDataHandler::receiveRows(const ShipRows& rows, StepResult& result, Waiter& waiter) {
  NodeLeaders& leaders = leadersOf(*leaders_);
  std::byte* segment = nullptr;
  if (result.status.ok()) {
    try {
      segment = store_.receiveBlob(rows.blob, /*whole=*/false);
    } catch (const std::exception& e) {
      result.status = Status::fromException(e);  // the chunks are still taken, and dropped
    }
  }
  ChunkHeader header{};
  do {
    NodeLeaders::Bytes head = bytesOf(sizeof header);
    leaders.receive(head, 0, waiter);
    std::memcpy(&header, head->data(), sizeof header);
    // At most kShipChunkBytes of rows (and their ranges), as the master built it.
    NodeLeaders::Bytes body = bytesOf(header.ranges * sizeof(RowRange) + header.row_bytes);
    leaders.receive(body, 0, waiter);
    if (segment == nullptr) continue;
    try {
      std::vector<RowRange> chunk(header.ranges);
      std::memcpy(chunk.data(), body->data(), chunk.size() * sizeof(RowRange));
      for (const RowRange& r : chunk) {
        SYNK_CHECK(r.begin >= 0 && static_cast<uint64_t>(r.end) * rows.row_bytes <= rows.blob.bytes,
                   "rows ", r.begin, "-", r.end, " outside blob ", rows.blob.id);
      }
      store_.reserveRows(rows.blob.id, chunk, rows.row_bytes);
      const std::byte* at = body->data() + chunk.size() * sizeof(RowRange);
      for (const RowRange& r : chunk) {
        const size_t bytes = static_cast<size_t>(r.size()) * rows.row_bytes;
        std::memcpy(segment + static_cast<size_t>(r.begin) * rows.row_bytes, at, bytes);
        at += bytes;
      }
    } catch (const std::exception& e) {  // a full /dev/shm: the rest is still taken, and dropped
      result.status = Status::fromException(e);
      segment = nullptr;
    }
  } while (header.last == 0);
}

}  // namespace synk::detail
