#pragma once
// Row selections along axis 0 (the `batch` and `batch_s` options) and the one split policy used
// everywhere: rows are spread as evenly as possible, the first (rows % parts) parts get one more.
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/byte_io.h"

namespace synk {

struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Part `index` of `rows` split into `parts`: [index * q + min(index, r), ...) with q = rows /
// parts, r = rows % parts. 10 rows on 3 parts: 4, 3, 3; on 4 parts: 3, 3, 2, 2.
RowRange splitRows(int64_t rows, int parts, int index);

class Selection {
 public:
  enum class Kind : uint8_t { All = 0, Count = 1, Range = 2, Indices = 3 };

  Selection() = default;
  static Selection all() { return Selection(); }
  // The first n rows (Synkhronos' integer batch).
  static Selection count(int64_t n);
  // Rows [start, stop).
  static Selection range(int64_t start, int64_t stop);
  // Rows in this order (may repeat).
  static Selection indices(std::vector<int64_t> rows);

  Kind kind() const { return kind_; }
  bool isAll() const { return kind_ == Kind::All; }
  bool isContiguous() const { return kind_ != Kind::Indices; }
  // Number of selected rows of an axis of `length` rows.
  int64_t size(int64_t length) const;
  // First selected row (contiguous kinds), the smallest index (indices).
  int64_t first() const;
  // Largest selected row + 1 (the length an array needs); 0 for All and an empty list.
  int64_t extent() const;
  const std::vector<int64_t>& rows() const { return rows_; }
  // Row at position `position` of the selection.
  int64_t rowAt(int64_t position) const;
  // Throws InvalidArgument naming `where` unless every selected row is in [0, length).
  // Throws InvalidArgument, prefixed by where() (called only then: the check runs on every call
  // and must not format), unless every selected row is < length.
  template <typename Where>
  void check(int64_t length, Where&& where) const {
    if (!fits(length)) throwOutOfRange(length, where());
  }
  bool fits(int64_t length) const;
  std::string describe() const;

  // Its payload form (core/byte_io.h).
  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.kind_, self.start_, self.stop_, self.rows_);
  }

 private:
  [[noreturn]] void throwOutOfRange(int64_t length, const std::string& where) const;
  Kind kind_ = Kind::All;
  int64_t start_ = 0;
  int64_t stop_ = 0;
  std::vector<int64_t> rows_;
};

}  // namespace synk
