#include "synk/harness/records/records.h"

#include <array>
#include <utility>

namespace synk::harness {
namespace {

constexpr std::array<std::pair<PointStatus, std::string_view>, 5> kPointStatusNames{{
    {PointStatus::ok, "ok"},
    {PointStatus::wrong, "wrong"},
    {PointStatus::failed, "failed"},
    {PointStatus::skipped, "skipped"},
    {PointStatus::interrupted, "interrupted"},
}};

}  // namespace

std::string toString(PointStatus status) {
  for (const auto& [value, name] : kPointStatusNames) {
    if (value == status) return std::string(name);
  }
  return "status " + std::to_string(static_cast<int>(status));
}

std::string statusText(PointStatus status, const std::string& reason) {
  return toString(status) + (reason.empty() ? "" : ": " + reason);
}

std::optional<PointStatus> parsePointStatus(std::string_view text) {
  for (const auto& [value, name] : kPointStatusNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::string pointStatusNames() {
  std::string out;
  for (const auto& [value, name] : kPointStatusNames)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

bool GpuReading::throttled() const {
  // NVML's clocks-event reasons that slow the GPU down against its will: software power cap
  // (0x4), hardware slowdown (0x8), software and hardware thermal slowdown (0x20, 0x40), power
  // brake (0x80). Idle (0x1) and clocks set by the user (0x2, 0x100) are not throttling.
  constexpr uint64_t kThrottling = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
  return (throttle_reasons & kThrottling) != 0 || (throttled_s && *throttled_s > 0);
}

}  // namespace synk::harness
