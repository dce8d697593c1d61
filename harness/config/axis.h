#pragma once
// Values of one sweep axis, as a config or a command line writes them (nvbench's syntax):
//   1,2,4,8          a list
//   64:4096:pow2     powers of two from 64 to 4096 (the first value must be a power of two)
//   8:1G:x4          geometric: 8, 32, 128, ... up to 1G (nccl-tests' -f)
//   0:100:25         arithmetic: 0, 25, 50, 75, 100 (a:b steps by 1)
// Items of a list may be ranges (1,2,8:64:pow2). Byte sizes (axes.bytes, nccl-tests' -b/-e) may
// use the 1024-based suffixes K, M, G, optionally followed by "B" or "iB": 32M = 32MiB =
// 33554432. Counts (ranks, batch, steps, dimensions) take none: `batch = 128k` is refused rather
// than read as 131072, which is rarely what "128k" meant for a count.
// Errors throw BadInput naming the bad item; the caller adds where it came from.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace synk::harness {

// The most values one axis may expand to (a typo such as 1:1G would otherwise run forever).
inline constexpr size_t kMaxAxisValues = 4096;

enum class Unit { Count, Bytes };

// "1,2,4:16:pow2" -> {1, 2, 4, 8, 16}; duplicates are removed, order is kept. Every value must
// be >= min_value.
std::vector<int64_t> parseIntAxis(std::string_view text, int64_t min_value = 0,
                                  Unit unit = Unit::Count);

// One byte size, with an optional K/M/G suffix.
int64_t parseSize(std::string_view text);
// One count: a plain integer (a unit suffix is refused, naming why).
int64_t parseCount(std::string_view text);

// "cpu, cuda" -> {"cpu", "cuda"}: trimmed, no empty item, no duplicate.
std::vector<std::string> parseNameList(std::string_view text);

std::vector<std::string_view> splitOn(std::string_view text, char separator);

}  // namespace synk::harness
