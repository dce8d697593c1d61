// Function calls: the split policy, every output op, batch and batch_s in every form, slicing
// with outputs and updates, rank-local and mirrored variables.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>

#include "tests/core/testkit/row_stats_ops.h"
#include "tests/support/session_fixture.h"

using namespace synk;
using test::Kit;

namespace {

// rows x cols float64 with x[i][j] = 2i + j + 1: every element distinct and exact.
Array table(int64_t rows, int64_t cols = 2) {
  Array x(DType::Float64, {rows, cols});
  for (int64_t i = 0; i < x.size(); ++i)
    x.as<double>()[i] = double(i + 1);
  return x;
}

Array tableF32(int64_t rows, int64_t cols, float offset) {
  Array x(DType::Float32, {rows, cols});
  for (int64_t i = 0; i < x.size(); ++i)
    x.as<float>()[i] = offset + float(i);
  return x;
}

std::vector<double> rowOf(const Array& x, int64_t i) {
  const int64_t cols = x.shape()[1];
  return std::vector<double>(x.as<double>() + i * cols, x.as<double>() + (i + 1) * cols);
}

std::vector<double> selectRows(const Array& x, const std::vector<int64_t>& rows) {
  std::vector<double> out;
  for (int64_t r : rows) {
    auto row = rowOf(x, r);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

std::vector<double> columnSums(const std::vector<double>& flat, int64_t cols) {
  std::vector<double> out(cols, 0);
  for (size_t i = 0; i < flat.size(); ++i)
    out[i % cols] += flat[i];
  return out;
}

// op over the rows of x, column by column, in plain loops.
std::vector<double> columnReduce(const Array& x, ReduceOp op) {
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  std::vector<double> out;
  for (int64_t j = 0; j < cols; ++j) {
    double acc = x.get({0, j});
    for (int64_t i = 1; i < rows; ++i) {
      const double e = x.get({i, j});
      if (op == ReduceOp::Sum) acc += e;
      if (op == ReduceOp::Prod) acc *= e;
      if (op == ReduceOp::Max) acc = std::max(acc, e);
      if (op == ReduceOp::Min) acc = std::min(acc, e);
    }
    out.push_back(acc);
  }
  return out;
}

std::vector<double> columnMeans(const std::vector<double>& flat, int64_t cols) {
  std::vector<double> out = columnSums(flat, cols);
  for (double& e : out)
    e /= double(flat.size() / size_t(cols));
  return out;
}

std::vector<double> columnMeans(const Array& x) {
  std::vector<double> out = columnReduce(x, ReduceOp::Sum);
  for (double& e : out)
    e /= double(x.shape()[0]);
  return out;
}

std::vector<int64_t> iota(int64_t begin, int64_t end) {
  std::vector<int64_t> v(static_cast<size_t>(end - begin));
  std::iota(v.begin(), v.end(), begin);
  return v;
}

}  // namespace

TEST_CASE("split policy: even spread, remainder one each to the first ranks", "[core]") {
  CHECK(splitRows(10, 3, 0).size() == 4);
  CHECK(splitRows(10, 3, 1).size() == 3);
  CHECK(splitRows(10, 3, 2).begin == 7);
  CHECK(splitRows(10, 4, 3).size() == 2);
  CHECK(splitRows(10, 4, 1).begin == 3);
  CHECK(splitRows(3, 4, 3).size() == 0);
}

// One session per test case: a CUDA process may fork only once (so no GENERATE around forks).
// shares: the rows each rank gets by the documented split policy.
void checkWeightedAvg(const std::vector<int64_t>& shares) {
  const int ranks = static_cast<int>(shares.size());
  Kit kit(ranks);
  FunctionOptions options = test::rowStatsAllOps();
  options.outputs["n_rows"] = "gather";  // one row count per rank
  Function f = kit.session.function(kit.model, "row_stats", options);
  const Array x = table(10);
  const std::vector<double> expected = columnMeans(x);
  // The data must tell the two averages apart: Synkhronos' equal-weight mean of the ranks'
  // means differs from the mean over all rows on this split.
  double unweighted = 0;
  int64_t begin = 0;
  for (int64_t share : shares) {
    double s = 0;
    for (int64_t i = begin; i < begin + share; ++i)
      s += x.get({i, 0});
    unweighted += s / double(share) / ranks;
    begin += share;
  }
  REQUIRE(unweighted != Approx(expected[0]).epsilon(1e-9));

  const std::vector<Array> out = f({kit.session.data(x)});
  CHECK(out[7].toVector<int64_t>() == shares);
  const std::vector<double> mean = out[0].toVector<double>();
  REQUIRE(mean.size() == 2);
  CHECK(mean[0] == Approx(expected[0]).epsilon(1e-12));
  CHECK(mean[1] == Approx(expected[1]).epsilon(1e-12));
  const std::vector<double> local = f.asLocal({x}).at(0).toVector<double>();
  CHECK(local[0] == Approx(expected[0]).epsilon(1e-12));
}

TEST_CASE("avg is weighted by rows: 10 rows on 3 ranks equal the one-process result", "[core]") {
  checkWeightedAvg({4, 3, 3});
}

TEST_CASE("avg is weighted by rows: 10 rows on 4 ranks equal the one-process result", "[core]") {
  checkWeightedAvg({3, 3, 2, 2});
}

void checkOutputOps(int master) {
  Kit kit(3, {.master_rank = master});
  Function f = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  const Array x = table(10);
  const std::vector<Array> out = f({kit.session.data(x)});
  // Columns hold 1, 3, ..., 19 and 2, 4, ..., 20: every sum and product is exact in float64.
  CHECK(out[1].toVector<double>() == columnReduce(x, ReduceOp::Sum));
  CHECK(out[2].toVector<double>() == columnReduce(x, ReduceOp::Prod));
  CHECK(out[3].toVector<double>() == columnReduce(x, ReduceOp::Max));
  CHECK(out[4].toVector<double>() == columnReduce(x, ReduceOp::Min));
  const std::vector<Array> local = f.asLocal({x});
  for (int o : {1, 2, 3, 4})
    CHECK(out[o].toVector<double>() == local[o].toVector<double>());
  CHECK(out[5].shape() == Shape{10, 2});
  CHECK(out[5].toVector<double>() == selectRows(x, iota(0, 10)));  // rank order = row order
  // none: the master's own value, the first row of its share (4, 3, 3 rows on 3 ranks).
  const int64_t share_begin[] = {0, 4, 7};
  CHECK(out[6].toVector<double>() == rowOf(x, share_begin[master]));
  CHECK(out[7].toVector<int64_t>() == std::vector<int64_t>{10});
}

TEST_CASE("every output op reduces onto the master (rank 0)", "[core]") {
  checkOutputOps(0);
}

TEST_CASE("every output op reduces onto the master (rank 1)", "[core]") {
  checkOutputOps(1);
}

// A call's bookkeeping (shapes, row counts, inline outputs, the request itself) is reused from
// call to call: calls of other functions, other row counts, an empty share and slices in between
// must leave nothing behind that the next call reads.
TEST_CASE("calls of other functions and sizes in turn: nothing carries over", "[core]") {
  Kit kit(3);
  Function f = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  Function info = kit.session.function(
      kit.model, "rank_info",
      {.outputs = {{"rank", "none"}, {"max_rank", "max"}, {"min_rank", "min"}}});
  auto checkRowStats = [&](int64_t rows, int slices) {
    INFO(rows << " rows, " << slices << " slice(s)");
    const Array x = table(rows);
    const std::vector<Array> out = f({kit.session.data(x)}, {.num_slices = slices});
    const std::vector<Array> local = f.asLocal({x});
    for (int o : {1, 2, 3, 4})
      CHECK(out[o].toVector<double>() == local[o].toVector<double>());
    CHECK(out[5].shape() == Shape{rows, 2});
    CHECK(out[5].toVector<double>() == selectRows(x, iota(0, rows)));
    CHECK(out[7].toVector<int64_t>() == std::vector<int64_t>{rows});
  };
  checkRowStats(10, 1);
  const std::vector<Array> ranks = info({});
  CHECK(ranks[1].toVector<int64_t>() == std::vector<int64_t>{2});
  CHECK(ranks[3].shape().empty());
  checkRowStats(2, 1);  // rank 2's share is empty
  checkRowStats(10, 2);
  checkRowStats(7, 1);
  CHECK(info({})[2].toVector<int64_t>() == std::vector<int64_t>{0});
}

TEST_CASE("outputs of a function without rows: every rank computes once", "[core]") {
  Kit kit(3);
  Function f = kit.session.function(
      kit.model, "rank_info",
      {.outputs = {{"rank", "none"}, {"max_rank", "max"}, {"min_rank", "min"}}});
  const std::vector<Array> out = f({});
  CHECK(out[0].toVector<int64_t>() == std::vector<int64_t>{0});
  CHECK(out[1].toVector<int64_t>() == std::vector<int64_t>{2});
  CHECK(out[2].toVector<int64_t>() == std::vector<int64_t>{0});
  CHECK(out[3].toVector<double>()[0] == Approx(1.0));  // avg of 0, 1, 2
}

TEST_CASE("batch selects rows before scattering: count, range, index list", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  const Array x = table(10);
  Data data = kit.session.data(x);
  struct Case {
    Selection batch;
    std::vector<int64_t> rows;
  };
  const std::vector<Case> cases = {
      {Selection::count(6), iota(0, 6)},
      {Selection::range(2, 9), iota(2, 9)},
      {Selection::indices({9, 0, 3, 3, 7}), {9, 0, 3, 3, 7}},
      {Selection::indices({9}), {9}},
  };
  for (const Case& c : cases) {
    INFO(c.batch.describe());
    const std::vector<Array> out = f({data}, {.batch = c.batch});
    const std::vector<double> rows = selectRows(x, c.rows);
    CHECK(out[5].toVector<double>() == rows);
    CHECK(out[1].toVector<double>() == columnSums(rows, 2));
    CHECK(out[7].toVector<int64_t>() == std::vector<int64_t>{int64_t(c.rows.size())});
  }
}

TEST_CASE("minibatch data is indexed from the batch's first row", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "pair_sum", {.outputs = {{"out", "gather"}}});
  const Array a = tableF32(10, 2, 0);
  const Array b = tableF32(5, 2, 1000);
  Data da = kit.session.data(a);
  Data db = kit.session.data(b, {.minibatch = true});
  auto expect = [&](const std::vector<int64_t>& a_rows, const std::vector<int64_t>& b_rows) {
    std::vector<float> out;
    for (size_t k = 0; k < a_rows.size(); ++k) {
      for (int j = 0; j < 2; ++j)
        out.push_back(a.get({a_rows[k], j}) + b.get({b_rows[k], j}));
    }
    return out;
  };
  CHECK(f({da, db}, {.batch = Selection::range(3, 8)}).at(0).toVector<float>() ==
        expect(iota(3, 8), iota(0, 5)));
  CHECK(f({da, db}, {.batch = Selection::indices({7, 3, 5})}).at(0).toVector<float>() ==
        expect({7, 3, 5}, {4, 0, 2}));
  // Rows 3..8 relative to row 3 need 6 minibatch rows; b has 5.
  CHECK_THROWS_WITH(f({da, db}, {.batch = Selection::indices({8, 3, 5})}),
                    Catch::Contains("input 'b': minibatch Data #") &&
                        Catch::Contains("has 5 rows, but the batch selects rows 3..8, read as "
                                        "its rows 0..5: 6 rows expected"));
  // A minibatch Data longer than the batch (a whole data set marked minibatch) would be read at
  // the wrong rows: refused, unless the batch starts at row 0, where the rows agree.
  Data whole = kit.session.data(a, {.minibatch = true});
  CHECK_THROWS_WITH(f({da, whole}, {.batch = Selection::range(3, 8)}),
                    Catch::Contains("has 10 rows, but the batch selects rows 3..7") &&
                        Catch::Contains("5 rows expected") &&
                        Catch::Contains("create it without minibatch"));
  std::vector<float> doubled;
  for (int64_t i = 0; i < 8; ++i)
    doubled.push_back(2 * a.as<float>()[i]);
  CHECK(f({da, whole}, {.batch = Selection::count(4)}).at(0).toVector<float>() == doubled);
}

TEST_CASE("batch_s selects rows of sliceable variables on each rank", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(
      kit.model, "sliced_sum",
      {.outputs = {{"col_sum", "sum"}, {"rows", "gather"}}, .sliceable = {"v"}});
  Variable v = kit.model.variable("v");
  std::vector<Array> per_rank;
  for (int r = 0; r < 2; ++r) {
    per_rank.push_back(tableF32(8, 2, 100.0f * r));
    kit.session.setValue(r, {v}, {kit.session.data(per_rank[r])});
  }
  auto rowsOf = [&](int r, const std::vector<int64_t>& rows) {
    std::vector<float> out;
    for (int64_t i : rows) {
      for (int j = 0; j < 2; ++j)
        out.push_back(per_rank[r].get({i, j}));
    }
    return out;
  };
  auto both = [&](const std::vector<int64_t>& r0, const std::vector<int64_t>& r1) {
    std::vector<float> out = rowsOf(0, r0);
    const std::vector<float> second = rowsOf(1, r1);
    out.insert(out.end(), second.begin(), second.end());
    return out;
  };
  CHECK(f({}).at(1).toVector<float>() == both(iota(0, 8), iota(0, 8)));
  CHECK(f({}, {.batch_s = {Selection::range(2, 5)}}).at(1).toVector<float>() ==
        both(iota(2, 5), iota(2, 5)));
  CHECK(f({}, {.batch_s = {Selection::indices({7, 1, 1})}}).at(1).toVector<float>() ==
        both({7, 1, 1}, {7, 1, 1}));
  const std::vector<Array> out =
      f({}, {.batch_s = {Selection::range(0, 2), Selection::indices({5, 6, 7})}});
  CHECK(out[1].toVector<float>() == both({0, 1}, {5, 6, 7}));
  const std::vector<float> rows = both({0, 1}, {5, 6, 7});
  CHECK(out[0].toVector<float>() ==
        std::vector<float>{rows[0] + rows[2] + rows[4] + rows[6] + rows[8],
                           rows[1] + rows[3] + rows[5] + rows[7] + rows[9]});
  // With num_slices the same rows come back in the same order.
  CHECK(f({}, {.batch_s = {Selection::range(0, 2), Selection::indices({5, 6, 7})}, .num_slices = 2})
            .at(1)
            .toVector<float>() == both({0, 1}, {5, 6, 7}));
}

TEST_CASE("batch_s pairs each rank's scattered rows with its variable rows", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "x_plus_v",
                                    {.outputs = {{"out", "gather"}}, .sliceable = {"v"}});
  Variable v = kit.model.variable("v");
  std::vector<Array> per_rank;
  for (int r = 0; r < 2; ++r) {
    per_rank.push_back(tableF32(8, 2, 100.0f * (r + 1)));
    kit.session.setValue(r, {v}, {kit.session.data(per_rank[r])});
  }
  const Array x = tableF32(6, 2, 0.5f);
  const std::vector<std::vector<int64_t>> v_rows = {{7, 0, 2}, {4, 5, 6}};
  const Array out =
      f({kit.session.data(x)}, {.batch_s = {Selection::indices(v_rows[0]), Selection::range(4, 7)}})
          .at(0);
  std::vector<float> expected;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 2; ++j) {
        expected.push_back(x.get({r * 3 + k, j}) + per_rank[r].get({v_rows[r][k], j}));
      }
    }
  }
  CHECK(out.toVector<float>() == expected);
}

TEST_CASE("num_slices: outputs accumulate, gather keeps order, none is the last slice", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  const Array x = table(10);
  Data data = kit.session.data(x);
  const std::vector<Array> whole = f({data});
  const std::vector<Array> sliced = f({data}, {.num_slices = 3});
  CHECK(sliced[0].toVector<double>()[0] == Approx(whole[0].toVector<double>()[0]).epsilon(1e-12));
  for (int o : {1, 2, 3, 4, 5})
    CHECK(sliced[o].toVector<double>() == whole[o].toVector<double>());
  CHECK(sliced[7].toVector<int64_t>() == whole[7].toVector<int64_t>());
  // Rank 0 holds rows 0..4; in 3 slices (2, 2, 1 rows) the last slice starts at row 4.
  CHECK(sliced[6].toVector<double>() == rowOf(x, 4));
  // More slices than rows: empty slices are skipped.
  CHECK(f({data}, {.num_slices = 7}).at(5).toVector<double>() == whole[5].toVector<double>());
}

TEST_CASE("num_slices: every slice sees the original variables, updates apply once", "[core]") {
  Kit kit(2);
  Function f_sum = kit.session.function(kit.model, "shared_update", {.updates = {{"s", "sum"}}});
  Function f_avg = kit.session.function(kit.model, "shared_update");
  Variable s = kit.model.variable("s");
  Data x = kit.session.data(Array::of<float>({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4}));
  const Array ones = Array::vector<float>({1, 1});
  f_sum({x}, {.num_slices = 2});
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == std::vector<float>{3, 3, 7, 7});
  kit.session.broadcast({s}, {ones});
  f_avg({x}, {.num_slices = 2});  // avg of the slices' sums, weighted by their rows
  CHECK(kit.session.gather({s}).at(0).toVector<float>() ==
        std::vector<float>{1.5f, 1.5f, 3.5f, 3.5f});

  Function mean = kit.session.function(kit.model, "mean_update");
  Variable s64 = kit.model.variable("s64");
  const Array t7 = table(7);
  Data x64 = kit.session.data(t7);
  mean({x64});
  const std::vector<double> once = kit.session.gather({s64}).at(0).toVector<double>();
  kit.session.broadcast({s64}, {Array::vector<double>({1, 1})});
  mean({x64}, {.num_slices = 3});
  const std::vector<double> sliced = kit.session.gather({s64}).at(0).toVector<double>();
  // With s = 1 each rank's update is the mean of its rows (rows 0..3 and 4..6 of 7).
  std::vector<double> means = columnMeans(selectRows(t7, iota(0, 4)), 2);
  const std::vector<double> rank1 = columnMeans(selectRows(t7, iota(4, 7)), 2);
  means.insert(means.end(), rank1.begin(), rank1.end());
  REQUIRE(once.size() == 4);
  REQUIRE(sliced.size() == 4);
  for (size_t i = 0; i < once.size(); ++i) {
    CHECK(once[i] == Approx(means[i]).epsilon(1e-12));
    CHECK(sliced[i] == Approx(means[i]).epsilon(1e-12));
  }
}

TEST_CASE("rank-local variables read as the reduction over ranks", "[core]") {
  Kit kit(2);
  Function f = kit.session.function(kit.model, "accumulate");
  const Array x = table(5);
  f({kit.session.data(x)});
  f({kit.session.data(x)});
  const std::vector<double> total = columnSums(selectRows(x, iota(0, 5)), 2);
  const std::vector<double> sum = kit.model.variable("acc").getValue().toVector<double>();
  const std::vector<double> mean = kit.model.variable("macc").getValue().toVector<double>();
  CHECK(sum == std::vector<double>{2 * total[0], 2 * total[1]});
  CHECK(mean == std::vector<double>{total[0], total[1]});
  // Each rank kept its own rows' sums: rank 0 has 3 rows, rank 1 has 2.
  const std::vector<double> gathered =
      kit.session.gather({kit.model.variable("acc")}).at(0).toVector<double>();
  const std::vector<double> rank0 = columnSums(selectRows(x, iota(0, 3)), 2);
  const std::vector<double> rank1 = columnSums(selectRows(x, iota(3, 5)), 2);
  CHECK(gathered == std::vector<double>{2 * rank0[0], 2 * rank0[1], 2 * rank1[0], 2 * rank1[1]});
  CHECK(kit.session.gather({kit.model.variable("macc")}).at(0).toVector<double>() == gathered);
}

TEST_CASE("mirrored variables change only through broadcast and all_reduce", "[core]") {
  Kit kit(2);
  Variable w = kit.model.variable("w");
  CHECK_THROWS_WITH(kit.session.function(kit.model, "update_mirrored"),
                    Catch::Contains("mirrored variable 'w'"));
  kit.session.distribute();
  CHECK_THROWS_AS(w.setValue(Array::vector<float>({0, 0, 0})), UsageError);
  Data d = kit.session.data(Array::vector<float>({5, 6, 7, 8}));
  CHECK_THROWS_WITH(kit.session.scatter({w}, {d}), Catch::Contains("mirrored"));
  CHECK_THROWS_WITH(kit.session.setValue(1, {w}, {d}), Catch::Contains("mirrored"));
  CHECK_THROWS_WITH(kit.session.reduce({w}, ReduceOp::Sum, true), Catch::Contains("mirrored"));
  kit.session.broadcast({w}, {Array::vector<float>({2, 4, 6})});
  kit.session.allReduce({w}, ReduceOp::Avg);
  CHECK(kit.session.gather({w}).at(0).toVector<float>() == std::vector<float>{2, 4, 6, 2, 4, 6});
  CHECK(kit.session.reduce({w}, ReduceOp::Sum, false).at(0).toVector<float>() ==
        std::vector<float>{4, 8, 12});
}

TEST_CASE("outputs too large to travel inline reduce through the communicator", "[core]") {
  // 600 float64 columns: 4.8 KB per output, over the 4 KiB that ride in the agreement exchange.
  Kit kit(3);
  Function f = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  const Array x = table(10, 600);
  const std::vector<Array> out = f({kit.session.data(x)});
  CHECK(out[1].toVector<double>() == columnReduce(x, ReduceOp::Sum));
  CHECK(out[3].toVector<double>() == columnReduce(x, ReduceOp::Max));
  CHECK(out[4].toVector<double>() == columnReduce(x, ReduceOp::Min));
  // Products of values up to 6000 round: partial products per rank differ in the last bits.
  const std::vector<double> prod = out[2].toVector<double>();
  const std::vector<double> prod_expected = columnReduce(x, ReduceOp::Prod);
  REQUIRE(prod.size() == 600);
  for (size_t j = 0; j < prod.size(); ++j)
    CHECK(prod[j] == Approx(prod_expected[j]).epsilon(1e-12));
  const std::vector<double> mean = out[0].toVector<double>();
  const std::vector<double> expected = columnMeans(x);
  REQUIRE(mean.size() == 600);
  for (size_t j = 0; j < mean.size(); ++j)
    CHECK(mean[j] == Approx(expected[j]).epsilon(1e-12));
  const std::vector<Array> local = f.asLocal({x});
  for (int o : {1, 3, 4})
    CHECK(out[o].toVector<double>() == local[o].toVector<double>());
  CHECK(out[5].toVector<double>() == x.toVector<double>());
}

namespace {

// x[i][j] = +-(i * cols + j + 1): even columns positive, odd columns negative, so a wrong
// identity (0 for max on negatives, 0 for min on positives, 0 for prod) changes the result.
Array signedTable(int64_t rows, int64_t cols) {
  Array x(DType::Float64, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j)
      x.as<double>()[i * cols + j] = (j % 2 ? -1.0 : 1.0) * double(i * cols + j + 1);
  }
  return x;
}

// shared_update's update for rows [begin, end) of x (2 columns): sum of x[i][j] * s[j].
std::vector<float> sharedUpdate(const std::vector<float>& x, const std::vector<float>& s, int begin,
                                int end) {
  std::vector<float> next = {0, 0};
  for (int i = begin; i < end; ++i) {
    for (int j = 0; j < 2; ++j)
      next[j] += x[i * 2 + j] * s[j];
  }
  return next;
}

}  // namespace

TEST_CASE("update ops max, min and prod combine the slices of a sliced call on each rank",
          "[core]") {
  Kit kit(2);
  Variable s = kit.model.variable("s");
  std::vector<float> x;  // 8 x 2: column 0 = 1..8, column 1 = -1..-8
  for (int i = 0; i < 8; ++i) {
    x.push_back(float(i + 1));
    x.push_back(-float(i + 1));
  }
  Data data = kit.session.data(Array::of<float>({8, 2}, x));
  const std::vector<float> s0 = {2, 0.5f};
  // 8 rows on 2 ranks: rows 0..3 and 4..7; each rank's 4 rows in 3 slices: 2, 1, 1 rows.
  const std::vector<std::pair<int, int>> slices = {{0, 2}, {2, 3}, {3, 4}};
  for (const char* op : {"max", "min", "prod"}) {
    INFO("update op " << op);
    Function f = kit.session.function(kit.model, "shared_update", {.updates = {{"s", op}}});
    kit.session.broadcast({s}, {Array::vector<float>(s0)});
    f({data}, {.num_slices = 3});
    std::vector<float> expected;
    for (int r = 0; r < 2; ++r) {
      std::vector<float> acc;
      for (const auto& [begin, end] : slices) {
        const std::vector<float> part = sharedUpdate(x, s0, 4 * r + begin, 4 * r + end);
        if (acc.empty()) {
          acc = part;
          continue;
        }
        for (int j = 0; j < 2; ++j) {
          if (op == std::string("max")) acc[j] = std::max(acc[j], part[j]);
          if (op == std::string("min")) acc[j] = std::min(acc[j], part[j]);
          if (op == std::string("prod")) acc[j] *= part[j];
        }
      }
      expected.insert(expected.end(), acc.begin(), acc.end());
    }
    CHECK(kit.session.gather({s}).at(0).toVector<float>() == expected);
  }
}

TEST_CASE("ranks with an empty share update from zero rows and weigh nothing in outputs",
          "[core]") {
  Kit kit(3);
  Variable s = kit.model.variable("s");
  const std::vector<std::vector<float>> before = {{1, 2}, {3, 4}, {5, 6}};
  for (int r = 0; r < 3; ++r)
    kit.session.setValue(r, {s}, {kit.session.data(Array::vector<float>(before[r]))});
  // 2 rows on 3 ranks: rank 0 gets row 0, rank 1 row 1, rank 2 none: it runs the function on
  // zero rows, whose update (a sum over no rows) is zero.
  const std::vector<float> x = {10, 20, 30, 40};
  Function update = kit.session.function(kit.model, "shared_update");
  update({kit.session.data(Array::of<float>({2, 2}, x))});
  std::vector<float> expected = sharedUpdate(x, before[0], 0, 1);
  const std::vector<float> rank1 = sharedUpdate(x, before[1], 1, 2);
  expected.insert(expected.end(), rank1.begin(), rank1.end());
  const std::vector<float> rank2 = sharedUpdate(x, before[2], 2, 2);
  CHECK(rank2 == std::vector<float>{0, 0});
  expected.insert(expected.end(), rank2.begin(), rank2.end());
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == expected);

  // Outputs: small ones reduce inline, 600 columns through the communicator.
  Function stats = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  for (int64_t cols : {2, 600}) {
    INFO(cols << " columns");
    const Array t = signedTable(2, cols);
    const std::vector<Array> out = stats({kit.session.data(t)});
    CHECK(out[1].toVector<double>() == columnReduce(t, ReduceOp::Sum));
    CHECK(out[2].toVector<double>() == columnReduce(t, ReduceOp::Prod));
    CHECK(out[3].toVector<double>() == columnReduce(t, ReduceOp::Max));
    CHECK(out[4].toVector<double>() == columnReduce(t, ReduceOp::Min));
    CHECK(out[0].toVector<double>() == columnMeans(t));  // (a + b) / 2 is exact here
    CHECK(out[5].toVector<double>() == t.toVector<double>());
    CHECK(out[7].toVector<int64_t>() == std::vector<int64_t>{2});
  }
}

TEST_CASE("an output with op none is the master's own value, even from zero rows", "[core]") {
  Kit kit(3, {.master_rank = 2});  // 2 rows on 3 ranks: the master (rank 2) gets none
  Function stats = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  Data two = kit.session.data(table(2));
  // row_stats' first row of no rows is NaN; the reduced outputs ignore the master's share.
  const std::vector<Array> out = stats({two});
  for (double e : out[6].toVector<double>())
    CHECK(std::isnan(e));
  CHECK(out[1].toVector<double>() == columnReduce(table(2), ReduceOp::Sum));
  // Every rank ran and updated its variables, the master on zero rows too.
  Function counted = kit.session.function(kit.model, "fail_on_rank",
                                          {.broadcast = {"who"}, .outputs = {{"z", "none"}}});
  Variable count = kit.model.variable("count");
  Data nobody = kit.session.data(Array::scalar<int32_t>(-1));
  Data x2 = kit.session.data(Array(DType::Float32, {2, 2}));
  CHECK(counted({x2, nobody}).at(0).toVector<float>() == std::vector<float>{1});
  CHECK(kit.session.gather({count}).at(0).toVector<int64_t>() == std::vector<int64_t>{1, 1, 1});
  const Array three = table(3);
  CHECK(stats({kit.session.data(three)}).at(6).toVector<double>() == rowOf(three, 2));
}

// An update of over a MiB all-reduced inside the call (the testkit's sum_in_update): on NCCL
// ranks the update buffer is a window (core/step/call_windows.cc) from the first call, and after
// three the whole rotation is; each call's sum must still be exact on every rank. Step times
// say whether the all-reduce ran in the window: on every rank where windows are expected (on
// cpu ranks: their test mode, SYNK_SHM_WINDOWS=1), on none on cpu ranks without it.
TEST_CASE("a large update all-reduced inside the call is the same sum on every rank", "[core]") {
  const int ranks = 2;
  Kit kit(ranks, {.step_times = true});
  Variable big = kit.model.variable("big");
  Function f = kit.session.function(kit.model, "sum_in_update");
  float want = 0;
  for (int call = 0; call < 5; ++call) {
    f({});
    for (const RankStepTimes& t : kit.session.lastStepTimes()) {
      INFO("call " << call << ", rank " << t.rank);
      if (test::windowsExpected(ranks)) {
        CHECK(t.window_all_reduces == 1);
      } else if (test::testBackend() == "cpu") {  // cpu ranks have windows in the test mode only
        CHECK(t.window_all_reduces == 0);
      }
    }
    want = ranks * want + 3;  // each rank added rank + 1, then the sum
    for (int r = 0; r < ranks; ++r) {
      INFO("call " << call << ", rank " << r);
      const std::vector<float> got = kit.session.getValue(r, {big}).at(0).toVector<float>();
      REQUIRE(got.size() * sizeof(float) > (size_t{1} << 20));
      CHECK(got.front() == want);
      CHECK(got[got.size() / 2] == want);
      CHECK(got.back() == want);
    }
  }
}
