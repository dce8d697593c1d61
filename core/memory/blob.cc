#include "synk/core/memory/blob.h"

#include <algorithm>

#include "synk/core/device.h"
#include "synk/core/error.h"

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
  entry.copy = DeviceBuffer();  // stream-ordered release: earlier reads of it finish first
  entry.copy_version = 0;
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

std::byte* BlobCache::deviceCopy(const BlobRef& ref, uint64_t version, size_t bytes, bool& copied) {
  SYNK_CHECK(device_ != nullptr, "a device-resident blob needs a device");
  std::byte* host = attach(ref);
  Entry& entry = entries_[ref.id];
  copied = false;
  if (!entry.copy || entry.copy_version != version || entry.copy.capacity() < bytes) {
    entry.copy.reserve(*device_, std::max<size_t>(bytes, 1));
    if (bytes) device_->copy(entry.copy.data(), host, bytes, CopyKind::HostToDevice);
    entry.copy_version = version;
    copied = true;
  }
  return static_cast<std::byte*>(entry.copy.data());
}

void BlobCache::release(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  drop(it->second);
  entries_.erase(it);
}

}  // namespace synk
