// The IDX reader: every element type, plain and gzip; each way a file can be malformed refused
// with the file and the reason; thousands of random mutations of a valid file either parse to a
// consistent array or are refused with an IdxError (never a crash or another exception).
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "synk/training/idx_reader.h"

namespace synk::training {
namespace {

std::vector<uint8_t> header(uint8_t type, std::vector<uint32_t> dims) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<uint8_t>(d >> shift));
  }
  return out;
}

size_t elementBytes(uint8_t type) {
  switch (type) {
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 1;
  }
}

std::vector<uint8_t> append(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A temporary directory per process, removed at the end.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("synk_idx_test-" + std::to_string(getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes, bool gzip) {
    const std::string file = (path / name).string();
    if (gzip) {
      gzFile out = gzopen(file.c_str(), "wb");
      gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(out);
    } else {
      std::ofstream(file, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
    return file;
  }
};

TEST_CASE("IDX files of every element type parse, plain or gzip", "[training]") {
  TempDir dir;
  const bool gzip = GENERATE(false, true);
  const std::string u8 = dir.write("u8", append(header(0x08, {2, 3}), {1, 2, 3, 250, 5, 6}), gzip);
  const Array a = readIdx(u8);
  CHECK(a.dtype() == DType::UInt8);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.toVector<uint8_t>() == std::vector<uint8_t>{1, 2, 3, 250, 5, 6});
  const Array i8 = parseIdx(append(header(0x09, {2}), {0xff, 0x05}), "i8");
  CHECK(i8.toVector<int32_t>() == std::vector<int32_t>{-1, 5});
  const Array i16 = parseIdx(append(header(0x0B, {1}), {0xfe, 0x00}), "i16");
  CHECK(i16.toVector<int32_t>() == std::vector<int32_t>{-512});
  const Array i32 = parseIdx(append(header(0x0C, {1}), {0x00, 0x01, 0x00, 0x02}), "i32");
  CHECK(i32.toVector<int32_t>() == std::vector<int32_t>{65538});
  const Array f32 = parseIdx(append(header(0x0D, {1}), {0x3f, 0xc0, 0x00, 0x00}), "f32");
  CHECK(f32.toVector<float>() == std::vector<float>{1.5f});
  const Array f64 = parseIdx(append(header(0x0E, {1}), {0xc0, 0x04, 0, 0, 0, 0, 0, 0}), "f64");
  CHECK(f64.toVector<double>() == std::vector<double>{-2.5});
  CHECK(parseIdx(header(0x08, {0, 5}), "empty").shape() == Shape{0, 5});
}

TEST_CASE("malformed IDX files are refused naming the file and what is wrong", "[training]") {
  const std::string p = "f: not a valid IDX file: ";
  const auto [bytes, reason] = GENERATE(table<std::vector<uint8_t>, std::string>({
      {{0, 0, 8}, "it has 3 bytes, less than the header's 4"},
      {{1, 0, 8, 1, 0, 0, 0, 0}, "the magic number starts with 0x01 0x00, not two zero bytes"},
      {{0x1f, 0x8b, 8, 1},
       "the magic number starts with 0x1f 0x8b, not two zero bytes (gzip inside gzip?)"},
      {{0, 0, 0x0A, 1, 0, 0, 0, 0},
       "unknown element type 0x0a (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D "
       "float32, 0x0E float64)"},
      {{0, 0, 8, 0}, "0 dimensions (1 to 8 supported)"},
      {{0, 0, 8, 9}, "9 dimensions (1 to 8 supported)"},
      {{0, 0, 8, 2, 0, 0, 0, 1},
       "the header declares 2 dimensions (12 bytes) but the file has 8 "
       "bytes"},
      {append(header(0x0C, {2, 2}), {0, 0, 0, 1}),
       "shape (2, 2) of int32 needs 16 bytes of data; the file ends after 4"},
      {append(header(0x08, {2}), {1, 2, 3}),
       "1 bytes follow the 2 bytes of data shape (2,) of "
       "uint8 declares"},
      {header(0x0E, {0xffffffff, 0xffffffff}),
       "dimensions (4294967295,)... declare more than 4294967296 bytes of float64"},
  }));
  CHECK_THROWS_WITH(parseIdx(bytes, "f"), p + reason);
}

TEST_CASE("unreadable and broken gzip files are refused naming the file", "[training]") {
  TempDir dir;
  CHECK_THROWS_WITH(readIdx((dir.path / "missing.gz").string()),
                    Catch::Contains("missing.gz: cannot open: No such file or directory"));
  std::vector<uint8_t> valid = append(header(0x08, {4096}), std::vector<uint8_t>(4096, 7));
  const std::string good = dir.write("good.gz", valid, true);
  std::ifstream in(good, std::ios::binary);
  std::vector<char> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> truncated(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2));
  const std::string cut = dir.write("cut.gz", truncated, false);
  CHECK_THROWS_AS(readIdx(cut), IdxError);
  CHECK_THROWS_WITH(readIdx(cut), Catch::StartsWith(cut + ": "));
  std::vector<uint8_t> corrupt(gz.begin(), gz.end());
  corrupt[corrupt.size() - 6] ^= 0xff;  // the CRC-32 of the trailer
  const std::string bad = dir.write("bad.gz", corrupt, false);
  CHECK_THROWS_WITH(readIdx(bad), Catch::StartsWith(bad + ": ") && Catch::Contains("gzip"));
  CHECK_THROWS_WITH(readMaybeGzip(good, 100), good +
                                                  ": more than 100 bytes (decompressed); "
                                                  "refused");
}

TEST_CASE("random mutations of an IDX file parse consistently or are refused", "[training]") {
  const std::vector<uint8_t> valid = append(header(0x0D, {3, 2}), std::vector<uint8_t>(24, 0x41));
  std::mt19937 rng(99);
  int refused = 0, parsed = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<uint8_t> bytes = valid;
    const int mutations = 1 + int(rng() % 3);
    for (int m = 0; m < mutations; ++m) {
      switch (rng() % 4) {
        case 0:  // flip a byte
          bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
          break;
        case 1:  // truncate
          bytes.resize(rng() % (bytes.size() + 1));
          break;
        case 2:  // insert a byte
          bytes.insert(bytes.begin() + long(rng() % (bytes.size() + 1)),
                       static_cast<uint8_t>(rng()));
          break;
        default:  // set a header byte to an extreme
          if (bytes.size() > 8) bytes[rng() % 8] = rng() % 2 ? 0xff : 0;
      }
      if (bytes.empty()) break;
    }
    try {
      const Array a = parseIdx(bytes, "mutant", {1 << 20, 8});
      const size_t header_bytes = 4 + 4 * size_t(bytes[3]);
      REQUIRE(header_bytes + size_t(a.size()) * elementBytes(bytes[2]) == bytes.size());
      ++parsed;
    } catch (const IdxError& e) {
      REQUIRE(std::strncmp(e.what(), "mutant: not a valid IDX file: ", 30) == 0);
      ++refused;
    }
  }
  CHECK(refused > 1000);
  CHECK(parsed > 100);  // flips inside the data keep it valid
}

}  // namespace
}  // namespace synk::training
