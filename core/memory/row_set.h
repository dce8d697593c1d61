#pragma once
// A set of rows (of a Data) as sorted, disjoint, non-touching ranges: which rows another node of
// a session holds, and which a call still needs there (core/step/ship_data.h).
#include <cstdint>
#include <vector>

#include "synk/core/selection.h"

namespace synk::detail {

class RowSet {
 public:
  RowSet() = default;
  // Rows in any order, repeats allowed.
  static RowSet of(std::vector<int64_t> rows);
  // Adds [range.begin, range.end) (nothing when empty).
  void add(RowRange range);
  void add(const RowSet& other);
  // The rows of this set that `other` lacks.
  RowSet minus(const RowSet& other) const;
  bool empty() const { return ranges_.empty(); }
  int64_t rows() const;
  const std::vector<RowRange>& ranges() const { return ranges_; }

 private:
  std::vector<RowRange> ranges_;
};

}  // namespace synk::detail
