#pragma once
// Minimal binary serialization for command payloads and barrier exchanges. Both ends are the same
// binary (forked processes), so values are written in native layout; only trivially copyable
// types, strings and vectors of them are supported.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace synk {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  void putString(const std::string& s) {
    put<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  template <typename T>
  void putVector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(values.size());
    append(values.data(), values.size() * sizeof(T));
  }
  void append(const void* data, size_t bytes) {
    const size_t at = bytes_.size();
    bytes_.resize(at + bytes);
    if (bytes) std::memcpy(bytes_.data() + at, data, bytes);
  }
  const std::byte* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  void clear() { bytes_.clear(); }

 private:
  std::vector<std::byte> bytes_;
};

class ByteReader {
 public:
  ByteReader(const std::byte* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take(&value, sizeof(T));
    return value;
  }
  std::string getString() {
    const auto n = get<uint64_t>();
    std::string s(n, '\0');
    take(s.data(), n);
    return s;
  }
  template <typename T>
  std::vector<T> getVector() {
    const auto n = get<uint64_t>();
    std::vector<T> values(n);
    take(values.data(), n * sizeof(T));
    return values;
  }
  size_t remaining() const { return size_ - at_; }
  // The next unread byte; skip() moves past bytes read in place.
  const std::byte* cursor() const { return data_ + at_; }
  void skip(size_t bytes) {
    SYNK_CHECK(at_ + bytes <= size_, "skipping ", bytes, " bytes at ", at_, " of ", size_);
    at_ += bytes;
  }

 private:
  void take(void* out, size_t bytes) {
    SYNK_CHECK(at_ + bytes <= size_, "reading ", bytes, " bytes at ", at_, " of ", size_);
    if (bytes) std::memcpy(out, data_ + at_, bytes);
    at_ += bytes;
  }
  const std::byte* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace synk
