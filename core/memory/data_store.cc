#include "synk/core/memory/data_store.h"

#include "synk/core/error.h"

namespace synk::detail {

std::byte* DataStore::receiveBlob(const BlobRef& ref) {
  Shipped& copy = shipped_[ref.id];
  if (!copy.segment || copy.generation != ref.generation) {
    if (copy.segment) {
      ShmSegment::remove(blobName(prefix_, ref.id, copy.generation));
      copy.segment = ShmSegment();
    }
    blobs_->release(ref.id);  // a mapping of the older generation
    copy.segment =
        ShmSegment::create(blobName(prefix_, ref.id, ref.generation),
                           std::max<uint64_t>(ref.bytes, 1), "Data copied from the master's node");
    copy.generation = ref.generation;
  }
  SYNK_CHECK(copy.segment.size() >= ref.bytes, "blob ", ref.id, " of ", ref.bytes,
             " bytes in a segment of ", copy.segment.size());
  return static_cast<std::byte*>(copy.segment.data());
}

void DataStore::forgetShipped(uint64_t id) {
  auto it = shipped_.find(id);
  if (it == shipped_.end()) return;
  ShmSegment::remove(blobName(prefix_, id, it->second.generation));
  shipped_.erase(it);
}

}  // namespace synk::detail
