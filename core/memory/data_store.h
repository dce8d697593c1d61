#pragma once
// Internal: where a session's Data lives. The master numbers its blobs (Data arrays, large command
// payloads) and collects the ids of those that went away; the next step carries them to every
// rank, whose BlobCache then drops its mapping (core/memory/blob.h). Every rank maps the blobs a
// command names through its BlobCache.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "synk/core/memory/blob.h"
#include "synk/core/memory/row_set.h"
#include "synk/core/shm_segment.h"

namespace synk::detail {

class DataStore {
 public:
  // Master.
  uint64_t nextBlobId() { return next_blob_id_++; }
  // Master: a blob went away; the next step tells the ranks to drop their mapping.
  void released(uint64_t id) { pending_releases_.push_back(id); }
  const std::vector<uint64_t>& pendingReleases() const { return pending_releases_; }
  // The first `count` pending releases went out with a command (later ones wait for the next).
  void releasesSent(size_t count) {
    pending_releases_.erase(pending_releases_.begin(),
                            pending_releases_.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                            count, pending_releases_.size())));
  }

  // Every rank, once its device exists: maps blobs for it.
  void open(const std::string& prefix, Device* device) {
    prefix_ = prefix;
    blobs_ = std::make_unique<BlobCache>(prefix, device);
  }
  // A rank on a node without the master (core/step/ship_data.h): the segment in this node's
  // shared memory that holds the master's blob `ref`, named as the master names it, made (an
  // older generation's removed) when `ref`'s generation is new here. `whole`: all of it is
  // written next, so all its pages are reserved; else only some rows: reserveRows() each first.
  std::byte* receiveBlob(const BlobRef& ref, bool whole = true);
  // Reserves the pages of `rows` (of `row_bytes` each) in this node's copy of blob `id` before
  // they are written (receiveBlob(ref, false) made it). Ranges less than kReserveGap apart are
  // reserved together with the gap: one system call for many, at a little memory.
  void reserveRows(uint64_t id, const std::vector<RowRange>& rows, size_t row_bytes);
  static constexpr size_t kReserveGap = size_t{64} << 10;
  // Master: the rows each entry of the coming ship-data step's ShipRequest::rows sends (known on
  // the master only; step/ship_data.h), written here by DataMaster as it builds the step.
  std::vector<RowSet>& rowsToShip() { return rows_to_ship_; }
  // The master released blob `id`: this node's copy goes too.
  void forgetShipped(uint64_t id);
  BlobCache& blobs() { return *blobs_; }
  // Unmaps everything (before the device goes away: device copies are freed).
  void close() noexcept {
    blobs_.reset();
    shipped_.clear();
  }
  // In a copy of the master made by fork(): forgets the mappings without freeing their device
  // copies (the device is the master's).
  void abandon() noexcept { (void)blobs_.release(); }

 private:
  uint64_t next_blob_id_ = 1;
  std::vector<uint64_t> pending_releases_;
  std::vector<RowSet> rows_to_ship_;
  std::string prefix_;
  std::unique_ptr<BlobCache> blobs_;
  struct Shipped {
    uint64_t generation = 0;
    ShmSegment segment;
    bool reserved = false;  // every page (else only the rows written so far)
  };
  std::unordered_map<uint64_t, Shipped> shipped_;  // by blob id: this node's copies
};

}  // namespace synk::detail
