#include "synk/core/selection.h"

#include <algorithm>

#include "synk/core/error.h"

namespace synk {

RowRange splitRows(int64_t rows, int parts, int index) {
  SYNK_CHECK(parts > 0 && index >= 0 && index < parts && rows >= 0);
  const int64_t q = rows / parts;
  const int64_t r = rows % parts;
  const int64_t begin = index * q + std::min<int64_t>(index, r);
  return {begin, begin + q + (index < r ? 1 : 0)};
}

Selection Selection::count(int64_t n) {
  if (n < 0) throw InvalidArgument(str("batch count must be >= 0, got ", n));
  Selection s;
  s.kind_ = Kind::Count;
  s.stop_ = n;
  return s;
}

Selection Selection::range(int64_t start, int64_t stop) {
  if (start < 0 || stop < start) {
    throw InvalidArgument(str("row range [", start, ", ", stop, ") is not a valid range"));
  }
  Selection s;
  s.kind_ = Kind::Range;
  s.start_ = start;
  s.stop_ = stop;
  return s;
}

Selection Selection::indices(std::vector<int64_t> rows) {
  for (int64_t row : rows) {
    if (row < 0) throw InvalidArgument(str("row index ", row, " is negative"));
  }
  Selection s;
  s.kind_ = Kind::Indices;
  s.rows_ = std::move(rows);
  return s;
}

int64_t Selection::size(int64_t length) const {
  switch (kind_) {
    case Kind::All:
      return length;
    case Kind::Count:
      return stop_;
    case Kind::Range:
      return stop_ - start_;
    case Kind::Indices:
      return static_cast<int64_t>(rows_.size());
  }
  return 0;
}

int64_t Selection::first() const {
  if (kind_ == Kind::Range) return start_;
  if (kind_ == Kind::Indices && !rows_.empty()) {
    return *std::min_element(rows_.begin(), rows_.end());
  }
  return 0;
}

int64_t Selection::extent() const {
  switch (kind_) {
    case Kind::All:
      return 0;
    case Kind::Count:
    case Kind::Range:
      return stop_;
    case Kind::Indices:
      return rows_.empty() ? 0 : *std::max_element(rows_.begin(), rows_.end()) + 1;
  }
  return 0;
}

int64_t Selection::rowAt(int64_t position) const {
  switch (kind_) {
    case Kind::All:
    case Kind::Count:
      return position;
    case Kind::Range:
      return start_ + position;
    case Kind::Indices:
      return rows_[static_cast<size_t>(position)];
  }
  return position;
}

bool Selection::fits(int64_t length) const {
  switch (kind_) {
    case Kind::All:
      return true;
    case Kind::Indices:
      return std::all_of(rows_.begin(), rows_.end(), [&](int64_t row) { return row < length; });
    default:
      return extent() <= length;
  }
}

void Selection::throwOutOfRange(int64_t length, const std::string& where) const {
  if (kind_ == Kind::Indices) {
    for (int64_t row : rows_) {
      if (row >= length) {
        throw InvalidArgument(str(where, ": index ", row, " is out of range for length ", length,
                                  " (valid: 0..", length - 1, ")"));
      }
    }
  }
  throw InvalidArgument(str(where, ": ", describe(), " is out of range for length ", length));
}

std::string Selection::describe() const {
  switch (kind_) {
    case Kind::All:
      return "all rows";
    case Kind::Count:
      return str("the first ", stop_, " rows");
    case Kind::Range:
      return str("rows [", start_, ", ", stop_, ")");
    case Kind::Indices:
      return str("an index list of ", rows_.size(), " rows");
  }
  return "?";
}

}  // namespace synk
