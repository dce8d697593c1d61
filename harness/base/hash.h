#pragma once
// FNV-1a, 64 bits: stable across platforms and builds, for identities (comparability keys,
// bootstrap seeds), not for security.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace synk::harness {

inline uint64_t fnv1a(std::string_view text, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// 16 lowercase hex digits.
inline std::string hashHex(std::string_view text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return buf;
}

}  // namespace synk::harness
