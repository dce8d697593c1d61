#include "core/blob.h"

#include "core/device.h"
#include "core/error.h"

namespace synk {

std::string blobName(const std::string& prefix, uint64_t id, uint64_t generation) {
  return str(prefix, "b", id, "-g", generation);
}

BlobCache::~BlobCache() {
  for (auto& [id, entry] : entries_)
    drop(entry);
}

void BlobCache::drop(Entry& entry) {
  if (entry.segment && device_) device_->unregisterHostMemory(entry.segment.data());
  entry.segment = ShmSegment();
}

std::byte* BlobCache::attach(const BlobRef& ref) {
  Entry& entry = entries_[ref.id];
  if (!entry.segment || entry.generation != ref.generation) {
    drop(entry);
    entry.segment = ShmSegment::open(blobName(prefix_, ref.id, ref.generation), ref.bytes);
    entry.generation = ref.generation;
    if (device_) device_->registerHostMemory(entry.segment.data(), entry.segment.size());
  }
  return static_cast<std::byte*>(entry.segment.data());
}

void BlobCache::release(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  drop(it->second);
  entries_.erase(it);
}

}  // namespace synk
