#include "synk/core/device.h"

namespace synk {

void Device::gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows,
                        size_t count) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t i = 0; i < count; ++i) {
    copy(out + i * row_bytes, in + static_cast<size_t>(rows[i]) * row_bytes, row_bytes,
         CopyKind::DeviceToDevice);
  }
}

}  // namespace synk
