#include "synk/core/memory/row_set.h"

#include <algorithm>

namespace synk::detail {

RowSet RowSet::of(std::vector<int64_t> rows) {
  std::sort(rows.begin(), rows.end());
  RowSet set;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j] <= rows[j - 1] + 1)
      ++j;
    set.ranges_.push_back({rows[i], rows[j - 1] + 1});
    i = j;
  }
  return set;
}

void RowSet::add(RowRange range) {
  if (range.size() <= 0) return;
  // The first range that ends at or after range.begin: it and those after it that start at or
  // before range.end touch the new range and merge into it.
  auto first = std::lower_bound(ranges_.begin(), ranges_.end(), range.begin,
                                [](const RowRange& r, int64_t row) { return r.end < row; });
  auto last = first;
  while (last != ranges_.end() && last->begin <= range.end) {
    range.begin = std::min(range.begin, last->begin);
    range.end = std::max(range.end, last->end);
    ++last;
  }
  first = ranges_.erase(first, last);
  ranges_.insert(first, range);
}

void RowSet::add(const RowSet& other) {
  // One merge of the two sorted lists (adding range by range would move the vector's tail for
  // each: quadratic in the ranges of a fragmented set, as index-list batches make).
  std::vector<RowRange> merged;
  merged.reserve(ranges_.size() + other.ranges_.size());
  auto a = ranges_.cbegin();
  auto b = other.ranges_.cbegin();
  while (a != ranges_.cend() || b != other.ranges_.cend()) {
    const bool take_a = b == other.ranges_.cend() || (a != ranges_.cend() && a->begin < b->begin);
    const RowRange next = take_a ? *a++ : *b++;
    if (!merged.empty() && next.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, next.end);
    } else {
      merged.push_back(next);
    }
  }
  ranges_ = std::move(merged);
}

RowSet RowSet::minus(const RowSet& other) const {
  RowSet out;
  auto o = other.ranges_.begin();
  for (RowRange r : ranges_) {
    while (o != other.ranges_.end() && o->end <= r.begin)
      ++o;
    for (auto p = o; p != other.ranges_.end() && p->begin < r.end; ++p) {
      if (p->begin > r.begin) out.ranges_.push_back({r.begin, p->begin});
      r.begin = std::max(r.begin, p->end);
    }
    if (r.begin < r.end) out.ranges_.push_back(r);
  }
  return out;
}

int64_t RowSet::rows() const {
  int64_t total = 0;
  for (const RowRange& r : ranges_)
    total += r.size();
  return total;
}

}  // namespace synk::detail
