#pragma once
// Blobs: shared-memory segments the master creates and every rank reads (Data arrays, large
// command arguments). The master names a blob "<prefix>b<id>-g<generation>"; a reallocation is a
// new generation under a new name (the old name is unlinked at once). Ranks attach lazily when a
// command refers to a generation they have not mapped, so creating or growing a blob costs no
// command round trip. A freed blob id travels with the next command so ranks drop their mapping.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "synk/core/device_buffer.h"
#include "synk/core/shm_segment.h"

namespace synk {

class Device;

struct BlobRef {
  uint64_t id = 0;
  uint64_t generation = 0;
  uint64_t bytes = 0;
};

std::string blobName(const std::string& prefix, uint64_t id, uint64_t generation);

// A rank's mappings of the master's blobs. On a device that copies from host memory, attached
// blobs are registered (pinned) with it.
class BlobCache {
 public:
  BlobCache(std::string prefix, Device* device) : prefix_(std::move(prefix)), device_(device) {}
  ~BlobCache();
  BlobCache(const BlobCache&) = delete;
  BlobCache& operator=(const BlobCache&) = delete;

  // The blob's bytes in this process, mapping (and registering) it on first use of a generation.
  std::byte* attach(const BlobRef& ref);
  // The first `bytes` bytes of the blob in device memory (a device-resident Data): copied from
  // shared memory when the generation or `version` differs from the copy's; `copied` says whether
  // a copy was enqueued (it reads host memory until the device is synchronised).
  std::byte* deviceCopy(const BlobRef& ref, uint64_t version, size_t bytes, bool& copied);
  void release(uint64_t id);

 private:
  struct Entry {
    uint64_t generation = 0;
    ShmSegment segment;
    DeviceBuffer copy;  // device-resident Data only
    uint64_t copy_version = 0;
  };
  void drop(Entry& entry);

  std::string prefix_;
  Device* device_;
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace synk
