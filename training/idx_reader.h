#pragma once
// IDX files (the MNIST family's format), plain or gzip-compressed:
//   bytes 0-1  zero;  byte 2  element type: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
//   0x0D float32, 0x0E float64;  byte 3  number of dimensions;  then one big-endian uint32 per
//   dimension;  then the elements, big-endian, row-major, and nothing after them.
// A file that breaks any of this is refused with an IdxError naming the file and what is wrong
// (never a crash, never a partial array).
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/error.h"

namespace synk::training {

class IdxError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

struct IdxLimits {
  uint64_t max_bytes = uint64_t{1} << 32;  // element bytes a file may declare
  int max_ndim = 8;
};

// Parses IDX bytes (already decompressed). `name` is used in messages. uint8 stays uint8, int8
// and int16 widen to int32, the others keep their type.
Array parseIdx(const std::vector<uint8_t>& bytes, const std::string& name,
               const IdxLimits& limits = {});

// Reads `path` (gzip or plain: zlib tells them apart by the gzip magic) and parses it.
Array readIdx(const std::string& path, const IdxLimits& limits = {});

// The file's bytes, decompressed if gzip. Throws IdxError naming the file (missing, unreadable,
// a corrupt or truncated gzip stream).
std::vector<uint8_t> readMaybeGzip(const std::string& path, uint64_t max_bytes);

}  // namespace synk::training
