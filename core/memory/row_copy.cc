#include "synk/core/memory/row_copy.h"

#include <algorithm>
#include <cstring>

namespace synk::detail {

void RowSource::gatherTo(std::byte* out) const {
  for (int64_t k = 0; k < count; ++k) {
    const int64_t row = batch->rowAt(first + k) - offset;
    std::memcpy(out + static_cast<size_t>(k) * row_bytes,
                base + static_cast<size_t>(row) * row_bytes, row_bytes);
  }
}

bool copyRows(Device& device, ShmHeap& heap, HeapBuffer& staging, void* dst,
              const RowSource& source) {
  const size_t bytes = source.bytes();
  if (bytes == 0) return false;
  if (source.contiguous()) {
    device.copy(dst, source.rows(), bytes, CopyKind::HostToDevice);
    return !device.isHost();
  }
  if (device.isHost()) {
    source.gatherTo(static_cast<std::byte*>(dst));
    return false;
  }
  staging.reserve(heap, std::max<size_t>(bytes, 1));
  source.gatherTo(static_cast<std::byte*>(staging.data()));
  device.copy(dst, staging.data(), bytes, CopyKind::HostToDevice);
  return true;
}

}  // namespace synk::detail
