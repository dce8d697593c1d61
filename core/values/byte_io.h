#pragma once
// Minimal binary serialization for command payloads and barrier exchanges. Both ends are the same
// binary (forked processes), so values are written in native layout: trivially copyable types,
// strings, vectors and maps of anything writable, and structs that list their fields once:
//
//   struct CallInput {
//     BlobRef blob; DType dtype; Shape shape;
//     template <typename Io, typename Self>
//     static void fields(Io& io, Self& self) { io(self.blob, self.dtype, self.shape); }
//   };
//   writer.write(input);  auto input = reader.read<CallInput>();
//
// The one list serves both directions (Self is const when writing), so what is written and what
// is read cannot drift apart.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "synk/core/error.h"

namespace synk {

class ByteWriter;
class ByteReader;

namespace byte_io_detail {
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V>
struct IsMap<std::map<K, V>> : std::true_type {};
}  // namespace byte_io_detail

// A struct with a static fields(io, self) listing its members (see above).
template <typename T>
concept HasFields = requires(ByteWriter& out, const T& value) {
  T::fields(out, value);
};

class ByteWriter {
 public:
  // Any writable value (see the file comment); several in order with operator().
  template <typename T>
  void write(const T& value);
  template <typename... T>
  void operator()(const T&... values) {
    (write(values), ...);
  }
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
  // What putVector writes for `count` values: for a size check that builds nothing.
  template <typename T>
  static constexpr size_t vectorBytes(size_t count) {
    return sizeof(uint64_t) + count * sizeof(T);
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

  // What ByteWriter::write wrote; several in order with operator().
  template <typename T>
  void read(T& value);
  template <typename T>
  T read() {
    T value{};
    read(value);
    return value;
  }
  template <typename... T>
  void operator()(T&... values) {
    (read(values), ...);
  }

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take(&value, sizeof(T));
    return value;
  }
  std::string getString() {
    const auto n = get<uint64_t>();
    checkCount(n, 1);
    std::string s(n, '\0');
    take(s.data(), n);
    return s;
  }
  template <typename T>
  std::vector<T> getVector() {
    const auto n = get<uint64_t>();
    checkCount(n, sizeof(T));
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
  // A count read from the input fits in what is left, `bytes_each` or more per element: a
  // corrupt count is refused before anything is allocated for it.
  void checkCount(uint64_t n, size_t bytes_each) const {
    SYNK_CHECK(bytes_each == 0 || n <= remaining() / bytes_each, "a count of ", n, " elements of ",
               bytes_each, " bytes at ", at_, " of ", size_);
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

template <typename T>
void ByteWriter::write(const T& value) {
  if constexpr (HasFields<T>) {
    T::fields(*this, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    putString(value);
  } else if constexpr (byte_io_detail::IsVector<T>::value) {
    using Element = typename T::value_type;
    if constexpr (std::is_trivially_copyable_v<Element> && !HasFields<Element>) {
      putVector(value);
    } else {
      put<uint64_t>(value.size());
      for (const Element& element : value)
        write(element);
    }
  } else if constexpr (byte_io_detail::IsMap<T>::value) {
    put<uint64_t>(value.size());
    for (const auto& [key, mapped] : value) {
      write(key);
      write(mapped);
    }
  } else {
    put(value);
  }
}

template <typename T>
void ByteReader::read(T& value) {
  if constexpr (HasFields<T>) {
    T::fields(*this, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    // Into the value's own storage: a request read again every step allocates nothing.
    const auto n = get<uint64_t>();
    checkCount(n, 1);
    value.resize(n);
    take(value.data(), n);
  } else if constexpr (byte_io_detail::IsVector<T>::value) {
    using Element = typename T::value_type;
    if constexpr (std::is_trivially_copyable_v<Element> && !HasFields<Element>) {
      const auto n = get<uint64_t>();
      checkCount(n, sizeof(Element));
      value.resize(n);
      take(value.data(), n * sizeof(Element));
    } else {
      const auto n = get<uint64_t>();
      checkCount(n, 1);  // every element reads at least one byte
      value.resize(n);
      for (Element& element : value)
        read(element);
    }
  } else if constexpr (byte_io_detail::IsMap<T>::value) {
    value.clear();
    const auto n = get<uint64_t>();
    checkCount(n, 1);
    for (uint64_t i = 0; i < n; ++i) {
      typename T::key_type key{};
      read(key);
      read(value[key]);
    }
  } else {
    value = get<T>();
  }
}

}  // namespace synk
