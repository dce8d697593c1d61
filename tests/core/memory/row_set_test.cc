// RowSet: which rows of a Data another node holds (core/step/ship_data.h). Checked against a
// plain set of rows on random operations, and on the cases that merge or split ranges.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "synk/core/memory/row_set.h"

namespace synk::detail {
namespace {

std::set<int64_t> rowsOf(const RowSet& s) {
  std::set<int64_t> out;
  int64_t last_end = INT64_MIN;
  for (const RowRange& r : s.ranges()) {
    // Sorted, disjoint and not touching: a touching pair would have been one range.
    REQUIRE(r.begin < r.end);
    REQUIRE(r.begin > last_end);
    last_end = r.end;
    for (int64_t row = r.begin; row < r.end; ++row)
      out.insert(row);
  }
  return out;
}

TEST_CASE("a row set of rows in any order, with repeats, is their ranges") {
  const RowSet s = RowSet::of({9, 3, 4, 4, 5, 12, 11, 0});
  REQUIRE(s.ranges().size() == 4);
  CHECK(s.ranges()[0].begin == 0);
  CHECK(s.ranges()[1].begin == 3);
  CHECK(s.ranges()[1].end == 6);
  CHECK(s.ranges()[3].end == 13);
  CHECK(s.rows() == 7);
  CHECK(RowSet::of({}).empty());
}

TEST_CASE("adding a range merges every range it touches") {
  RowSet s;
  s.add({10, 20});
  s.add({30, 40});
  s.add({50, 60});
  s.add({20, 30});  // touches both neighbours: one range
  REQUIRE(s.ranges().size() == 2);
  CHECK(s.ranges()[0].begin == 10);
  CHECK(s.ranges()[0].end == 40);
  s.add({5, 55});
  REQUIRE(s.ranges().size() == 1);
  CHECK(s.rows() == 55);
  s.add({70, 70});  // empty: nothing
  CHECK(s.ranges().size() == 1);
}

TEST_CASE("minus keeps the rows the other set lacks") {
  RowSet held;
  held.add({10, 20});
  held.add({25, 30});
  RowSet needed;
  needed.add({0, 40});
  const RowSet missing = needed.minus(held);
  REQUIRE(missing.ranges().size() == 3);
  CHECK(missing.rows() == 40 - 15);
  CHECK(needed.minus(needed).empty());
  CHECK(held.minus(RowSet()).rows() == held.rows());
}

TEST_CASE("row sets agree with a set of rows under random adds and differences") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    RowSet a, b;
    std::set<int64_t> ra, rb;
    for (int k = 0; k < 12; ++k) {
      const int64_t begin = rng() % 200, size = rng() % 15;
      RowSet& s = k % 2 ? a : b;
      std::set<int64_t>& r = k % 2 ? ra : rb;
      s.add({begin, begin + size});
      for (int64_t row = begin; row < begin + size; ++row)
        r.insert(row);
    }
    REQUIRE(rowsOf(a) == ra);
    std::set<int64_t> difference;
    for (int64_t row : ra)
      if (!rb.count(row)) difference.insert(row);
    REQUIRE(rowsOf(a.minus(b)) == difference);
    RowSet both = a;
    both.add(b);
    std::set<int64_t> all = ra;
    all.insert(rb.begin(), rb.end());
    REQUIRE(rowsOf(both) == all);
    REQUIRE(rowsOf(RowSet::of(std::vector<int64_t>(ra.begin(), ra.end()))) == ra);
  }
}

}  // namespace
}  // namespace synk::detail
