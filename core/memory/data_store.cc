#include "synk/core/memory/data_store.h"

#include "synk/core/error.h"

namespace synk::detail {

std::byte* DataStore::receiveBlob(const BlobRef& ref, bool whole) {
  constexpr const char* kWhat = "Data copied from the master's node";
  Shipped& copy = shipped_[ref.id];
  if (!copy.segment || copy.generation != ref.generation) {
    if (copy.segment) {
      ShmSegment::remove(blobName(prefix_, ref.id, copy.generation));
      copy.segment = ShmSegment();
    }
    blobs_->release(ref.id);  // a mapping of the older generation
    const std::string name = blobName(prefix_, ref.id, ref.generation);
    const size_t bytes = std::max<uint64_t>(ref.bytes, 1);
    copy.segment = whole ? ShmSegment::create(name, bytes, kWhat)
                         : ShmSegment::createSparse(name, bytes, kWhat);
    copy.generation = ref.generation;
    copy.reserved = whole;
  } else if (whole && !copy.reserved) {
    copy.segment.reserve(0, copy.segment.size(), kWhat);  // rows before, the whole now
    copy.reserved = true;
  }
  SYNK_CHECK(copy.segment.size() >= ref.bytes, "blob ", ref.id, " of ", ref.bytes,
             " bytes in a segment of ", copy.segment.size());
  return static_cast<std::byte*>(copy.segment.data());
}

void DataStore::reserveRows(uint64_t id, const std::vector<RowRange>& rows, size_t row_bytes) {
  const auto it = shipped_.find(id);
  SYNK_CHECK(it != shipped_.end(), "no copy of blob ", id, " to reserve rows in");
  if (it->second.reserved) return;
  std::vector<std::pair<size_t, size_t>> spans;  // {offset, bytes}, sorted as `rows` are
  for (const RowRange& r : rows) {
    const size_t begin = static_cast<size_t>(r.begin) * row_bytes;
    const size_t end = static_cast<size_t>(r.end) * row_bytes;
    if (!spans.empty() && begin >= spans.back().first + spans.back().second &&
        begin - (spans.back().first + spans.back().second) < kReserveGap) {
      spans.back().second = end - spans.back().first;
    } else {
      spans.push_back({begin, end - begin});
    }
  }
  it->second.segment.reserve(spans, "rows of a Data copied from the master's node");
}

void DataStore::forgetShipped(uint64_t id) {
  auto it = shipped_.find(id);
  if (it == shipped_.end()) return;
  ShmSegment::remove(blobName(prefix_, id, it->second.generation));
  shipped_.erase(it);
}

}  // namespace synk::detail
