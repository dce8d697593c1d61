#include "synk/training/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace synk::training {
namespace {

struct ElementType {
  uint8_t code;
  const char* name;
  size_t bytes;
  DType dtype;  // what it is stored as in synk
};

constexpr ElementType kTypes[] = {
    {0x08, "uint8", 1, DType::UInt8},     {0x09, "int8", 1, DType::Int32},
    {0x0B, "int16", 2, DType::Int32},     {0x0C, "int32", 4, DType::Int32},
    {0x0D, "float32", 4, DType::Float32}, {0x0E, "float64", 8, DType::Float64},
};

uint64_t bigEndian(const uint8_t* p, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i)
    value = value << 8 | p[i];
  return value;
}

template <typename T, typename Bits>
T fromBits(uint64_t bits) {
  const auto narrow = static_cast<Bits>(bits);
  T value;
  std::memcpy(&value, &narrow, sizeof value);
  return value;
}

template <typename T, typename Read>
void convertEach(const uint8_t* in, size_t bytes, Array& out, Read read) {
  T* dst = out.as<T>();
  const int64_t n = out.size();
  for (int64_t i = 0; i < n; ++i)
    dst[i] = read(bigEndian(in + static_cast<size_t>(i) * bytes, bytes));
}

void convert(const ElementType& type, const uint8_t* in, Array& out) {
  switch (type.code) {
    case 0x08:  // the MNIST family's pixels and labels: a plain copy
      if (out.bytes()) std::memcpy(out.data(), in, out.bytes());
      return;
    case 0x09:
      return convertEach<int32_t>(in, 1, out, [](uint64_t b) { return int8_t(uint8_t(b)); });
    case 0x0B:
      return convertEach<int32_t>(in, 2, out, [](uint64_t b) { return int16_t(uint16_t(b)); });
    case 0x0C:
      return convertEach<int32_t>(in, 4, out, [](uint64_t b) { return int32_t(uint32_t(b)); });
    case 0x0D:
      return convertEach<float>(in, 4, out,
                                [](uint64_t b) { return fromBits<float, uint32_t>(b); });
    case 0x0E:
      return convertEach<double>(in, 8, out,
                                 [](uint64_t b) { return fromBits<double, uint64_t>(b); });
  }
}

// zlib's reason (it prefixes the path, which the caller names already).
std::string gzipReason(gzFile file, const std::string& path) {
  int code = 0;
  std::string why = gzerror(file, &code);
  if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
  if (code == Z_ERRNO) return why.empty() ? "read error" : why;
  return "corrupt or truncated gzip stream (" + (why.empty() ? std::string("zlib error") : why) +
         ")";
}

std::string hexByte(uint8_t b) {
  const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

}  // namespace

Array parseIdx(const std::vector<uint8_t>& bytes, const std::string& name,
               const IdxLimits& limits) {
  auto fail = [&](const std::string& what) -> IdxError {
    return IdxError(str(name, ": not a valid IDX file: ", what));
  };
  if (bytes.size() < 4)
    throw fail(str("it has ", bytes.size(), " bytes, less than the header's 4"));
  if (bytes[0] != 0 || bytes[1] != 0) {
    throw fail(str("the magic number starts with ", hexByte(bytes[0]), " ", hexByte(bytes[1]),
                   ", not two zero bytes",
                   bytes[0] == 0x1f && bytes[1] == 0x8b ? " (gzip inside gzip?)" : ""));
  }
  const ElementType* type = nullptr;
  for (const ElementType& t : kTypes) {
    if (t.code == bytes[2]) type = &t;
  }
  if (!type) {
    throw fail(str("unknown element type ", hexByte(bytes[2]),
                   " (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64)"));
  }
  const int ndim = bytes[3];
  if (ndim < 1 || ndim > limits.max_ndim) {
    throw fail(str(ndim, " dimensions (1 to ", limits.max_ndim, " supported)"));
  }
  const size_t header = 4 + 4 * static_cast<size_t>(ndim);
  if (bytes.size() < header) {
    throw fail(str("the header declares ", ndim, " dimensions (", header,
                   " bytes) but the file has ", bytes.size(), " bytes"));
  }
  Shape shape;
  uint64_t data_bytes = type->bytes;
  for (int d = 0; d < ndim; ++d) {
    const uint64_t dim = bigEndian(bytes.data() + 4 + 4 * d, 4);
    shape.push_back(static_cast<int64_t>(dim));
    if (dim != 0 && data_bytes > limits.max_bytes / dim) {
      throw fail(str("dimensions ", shapeString(shape), "... declare more than ", limits.max_bytes,
                     " bytes of ", type->name));
    }
    data_bytes *= dim;
  }
  const uint64_t have = bytes.size() - header;
  if (have < data_bytes) {
    throw fail(str("shape ", shapeString(shape), " of ", type->name, " needs ", data_bytes,
                   " bytes of data; the file ends after ", have));
  }
  if (have > data_bytes) {
    throw fail(str(have - data_bytes, " bytes follow the ", data_bytes, " bytes of data shape ",
                   shapeString(shape), " of ", type->name, " declares"));
  }
  Array out(type->dtype, shape);
  convert(*type, bytes.data() + header, out);
  return out;
}

std::vector<uint8_t> readMaybeGzip(const std::string& path, uint64_t max_bytes) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) {
    throw IdxError(str(path, ": cannot open: ", errno ? std::strerror(errno) : "out of memory"));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(file, &gzclose);
  std::vector<uint8_t> out;
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    const size_t at = out.size();
    if (at > max_bytes) {
      throw IdxError(str(path, ": more than ", max_bytes, " bytes (decompressed); refused"));
    }
    out.resize(at + kChunk);
    const int got = gzread(file, out.data() + at, static_cast<unsigned>(kChunk));
    if (got < 0) throw IdxError(str(path, ": cannot read: ", gzipReason(file, path)));
    out.resize(at + static_cast<size_t>(got));
    if (got == 0) break;
  }
  int code = 0;
  gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    throw IdxError(str(path, ": cannot read: ", gzipReason(file, path)));
  }
  return out;
}

Array readIdx(const std::string& path, const IdxLimits& limits) {
  // The header's 4 + 4 * ndim bytes on top of the data limit.
  return parseIdx(readMaybeGzip(path, limits.max_bytes + 4 + 4 * 255), path, limits);
}

}  // namespace synk::training
