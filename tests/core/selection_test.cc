// core/selection.h without a session: the one split policy (splitRows) and Selection (the batch
// and batch_s options), their bad-input messages and their payload form.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/error.h"
#include "synk/core/selection.h"
#include "synk/core/step/call_request.h"

namespace synk {
namespace {

std::vector<int64_t> shares(int64_t rows, int parts) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < parts; ++i)
    sizes.push_back(splitRows(rows, parts, i).size());
  return sizes;
}

TEST_CASE("splitRows: the first rows % parts parts get one more row", "[core]") {
  CHECK(shares(10, 3) == std::vector<int64_t>{4, 3, 3});
  CHECK(shares(10, 4) == std::vector<int64_t>{3, 3, 2, 2});
  CHECK(shares(2, 4) == std::vector<int64_t>{1, 1, 0, 0});
  CHECK(shares(0, 3) == std::vector<int64_t>{0, 0, 0});
  CHECK(shares(7, 1) == std::vector<int64_t>{7});
  // Where each part starts: 10 rows on 3 parts are [0, 4), [4, 7), [7, 10).
  CHECK(splitRows(10, 3, 1).begin == 4);
  CHECK(splitRows(10, 3, 2).begin == 7);
  CHECK(splitRows(10, 3, 2).end == 10);
  // Empty parts sit at the end, not at 0: a rank with no rows still has a valid offset.
  CHECK(splitRows(2, 4, 3).begin == 2);
}

TEST_CASE("splitRows covers every row once, in order, as evenly as possible", "[core]") {
  for (int64_t rows = 0; rows <= 70; ++rows) {
    for (int parts = 1; parts <= 9; ++parts) {
      int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const RowRange part = splitRows(rows, parts, i);
        INFO(rows << " rows, part " << i << " of " << parts);
        REQUIRE(part.begin == next);
        REQUIRE(part.size() == rows / parts + (i < rows % parts ? 1 : 0));
        next = part.end;
      }
      REQUIRE(next == rows);
    }
  }
  // Large counts do not overflow the offset arithmetic.
  const int64_t huge = int64_t{1} << 40;
  CHECK(splitRows(huge + 5, 8, 7).end == huge + 5);
}

TEST_CASE("splitRows refuses a part that does not exist", "[core]") {
  CHECK_THROWS_AS(splitRows(10, 0, 0), InternalError);
  CHECK_THROWS_AS(splitRows(10, 3, 3), InternalError);
  CHECK_THROWS_AS(splitRows(10, 3, -1), InternalError);
  CHECK_THROWS_AS(splitRows(-1, 3, 0), InternalError);
}

TEST_CASE("Selection kinds: size, first, extent, rowAt, contiguity", "[core]") {
  SECTION("all rows") {
    const Selection s = Selection::all();
    CHECK(s.isAll());
    CHECK(s.isContiguous());
    CHECK(s.size(12) == 12);
    CHECK(s.first() == 0);
    CHECK(s.extent() == 0);
    CHECK(s.rowAt(5) == 5);
    CHECK(s.fits(0));
    CHECK(s.describe() == "all rows");
  }
  SECTION("the first n rows") {
    const Selection s = Selection::count(6);
    CHECK_FALSE(s.isAll());
    CHECK(s.isContiguous());
    CHECK(s.size(100) == 6);
    CHECK(s.first() == 0);
    CHECK(s.extent() == 6);
    CHECK(s.rowAt(5) == 5);
    CHECK(s.fits(6));
    CHECK_FALSE(s.fits(5));
    CHECK(s.describe() == "the first 6 rows");
  }
  SECTION("a range") {
    const Selection s = Selection::range(3, 8);
    CHECK(s.kind() == Selection::Kind::Range);
    CHECK(s.isContiguous());
    CHECK(s.size(100) == 5);
    CHECK(s.first() == 3);
    CHECK(s.extent() == 8);
    CHECK(s.rowAt(0) == 3);
    CHECK(s.rowAt(4) == 7);
    CHECK(s.fits(8));
    CHECK_FALSE(s.fits(7));
    CHECK(s.describe() == "rows [3, 8)");
    CHECK(Selection::range(4, 4).size(10) == 0);  // empty, and valid
  }
  SECTION("an index list, in its order, repeats allowed") {
    const Selection s = Selection::indices({7, 2, 9, 2});
    CHECK_FALSE(s.isContiguous());
    CHECK(s.size(100) == 4);
    CHECK(s.first() == 2);    // the smallest
    CHECK(s.extent() == 10);  // the largest + 1
    CHECK(s.rowAt(0) == 7);
    CHECK(s.rowAt(3) == 2);
    CHECK(s.fits(10));
    CHECK_FALSE(s.fits(9));
    CHECK(s.describe() == "an index list of 4 rows");
    const Selection empty = Selection::indices({});
    CHECK(empty.size(5) == 0);
    CHECK(empty.first() == 0);
    CHECK(empty.extent() == 0);
  }
}

TEST_CASE("Selection refuses bad input with a message naming it", "[core]") {
  CHECK_THROWS_WITH(Selection::count(-1), "batch count must be >= 0, got -1");
  CHECK_THROWS_WITH(Selection::range(5, 2), "row range [5, 2) is not a valid range");
  CHECK_THROWS_WITH(Selection::range(-1, 2), "row range [-1, 2) is not a valid range");
  CHECK_THROWS_WITH(Selection::indices({0, 3, -4}), "row index -4 is negative");
  CHECK_THROWS_AS(Selection::indices({-1}), InvalidArgument);
}

TEST_CASE("Selection::check names where, the first bad index and the valid rows", "[core]") {
  int formatted = 0;
  auto where = [&] {
    ++formatted;
    return std::string("batch for function 'f' input 'x'");
  };
  Selection::indices({1, 4, 6, 9}).check(10, where);
  Selection::range(2, 10).check(10, where);
  CHECK(formatted == 0);  // the label is built only for the error
  CHECK_THROWS_WITH(Selection::indices({1, 6, 4, 9}).check(5, where),
                    "batch for function 'f' input 'x': index 6 is out of range for length 5 "
                    "(valid: 0..4)");
  CHECK_THROWS_WITH(Selection::range(2, 9).check(5, where),
                    "batch for function 'f' input 'x': rows [2, 9) is out of range for length 5");
  CHECK_THROWS_WITH(Selection::count(6).check(5, where),
                    "batch for function 'f' input 'x': the first 6 rows is out of range for "
                    "length 5");
  CHECK_THROWS_AS(Selection::count(1).check(0, where), InvalidArgument);
  CHECK(formatted == 4);
  Selection::all().check(0, where);  // all rows fit any length
}

TEST_CASE("batch_s: none, one for every rank, or one per rank", "[core]") {
  detail::CallRequest request;
  CHECK(request.batchS(2).isAll());
  request.batch_s = {Selection::range(0, 3)};
  CHECK(request.batchS(0).first() == 0);
  CHECK(request.batchS(3).size(0) == 3);
  request.batch_s = {Selection::range(0, 3), Selection::range(3, 5), Selection::indices({9})};
  CHECK(request.batchS(1).first() == 3);
  CHECK(request.batchS(2).rowAt(0) == 9);
}

TEST_CASE("a Selection survives its payload form, every kind", "[core]") {
  const std::vector<Selection> kinds = {Selection::all(), Selection::count(5),
                                        Selection::range(2, 7), Selection::indices({4, 0, 4})};
  ByteWriter out;
  out.write(kinds);
  ByteReader in(out.data(), out.size());
  const auto back = in.read<std::vector<Selection>>();
  CHECK(in.remaining() == 0);
  REQUIRE(back.size() == kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    CHECK(back[k].kind() == kinds[k].kind());
    CHECK(back[k].describe() == kinds[k].describe());
    CHECK(back[k].size(20) == kinds[k].size(20));
    CHECK(back[k].first() == kinds[k].first());
    CHECK(back[k].extent() == kinds[k].extent());
    CHECK(back[k].rows() == kinds[k].rows());
  }
}

}  // namespace
}  // namespace synk
