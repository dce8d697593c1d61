#include "synk/harness/records/records.h"

namespace synk::harness {

bool GpuReading::throttled() const {
  // NVML's clocks-event reasons that slow the GPU down against its will: software power cap
  // (0x4), hardware slowdown (0x8), software and hardware thermal slowdown (0x20, 0x40), power
  // brake (0x80). Idle (0x1) and clocks set by the user (0x2, 0x100) are not throttling.
  constexpr uint64_t kThrottling = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
  return (throttle_reasons & kThrottling) != 0 || (throttled_s && *throttled_s > 0);
}

}  // namespace synk::harness
