// Shared-variable collectives: every collective and op on every dtype, ranks holding different
// shapes (exact results or clear errors), scatter/set_value/get_value with batches.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;
using test::Kit;

namespace {

const char* kTyped[] = {"var_f32", "var_f64", "var_i32", "var_i64",
                        "var_u8",  "var_f16", "var_bf16"};

// v rounded to nearest-even with `bits` significant bits (the dtype's precision).
double roundToBits(double v, int bits) {
  if (v == 0) return v;
  int exponent = 0;
  const double fraction = std::frexp(v, &exponent);  // v = fraction * 2^exponent, |f| in [.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(fraction, bits)), exponent - bits);
}

// v as the dtype holds it: integers wrap, floating types keep their significant bits.
double asStored(double v, DType dtype) {
  switch (dtype) {
    case DType::UInt8:
      return double(int64_t(v) & 0xff);
    case DType::Int32:
      return double(int32_t(int64_t(v)));
    case DType::Int64:
      return double(int64_t(v));
    case DType::Float16:
      return roundToBits(v, 11);
    case DType::BFloat16:
      return roundToBits(v, 8);
    case DType::Float32:
      return roundToBits(v, 24);
    default:
      return v;
  }
}

// What op gives over ranks 0..n-1 when rank r holds (r+1)(i+1), computed in double and stored
// through the dtype (integers wrap).
std::vector<double> expected(ReduceOp op, int n, DType dtype) {
  std::vector<double> out;
  for (int i = 0; i < 4; ++i) {
    double acc = op == ReduceOp::Prod  ? 1
                 : op == ReduceOp::Min ? 1e300
                 : op == ReduceOp::Max ? -1e300
                                       : 0;
    for (int r = 0; r < n; ++r) {
      const double v = double(r + 1) * (i + 1);
      if (op == ReduceOp::Sum || op == ReduceOp::Avg) acc += v;
      if (op == ReduceOp::Prod) acc *= v;
      if (op == ReduceOp::Max) acc = std::max(acc, v);
      if (op == ReduceOp::Min) acc = std::min(acc, v);
    }
    if (op == ReduceOp::Avg) acc /= n;
    out.push_back(asStored(acc, dtype));
  }
  return out;
}

std::vector<double> asDoubles(const Array& a) {
  std::vector<double> out;
  for (int64_t i = 0; i < a.size(); ++i)
    out.push_back(a.flat(i));
  return out;
}

std::vector<double> rankValues(int r) {
  return {double(r + 1), 2.0 * (r + 1), 3.0 * (r + 1), 4.0 * (r + 1)};
}

}  // namespace

void checkEveryOp(int n) {
  Kit kit(n);
  Function fill = kit.session.function(kit.model, "fill_ranked");
  for (bool native : {true, false}) {
    if (native && test::sharesDevices(n)) {
      // NCCL needs one GPU per rank: asked for on ranks sharing one, it is refused at once,
      // naming the host-staged alternative, and the session goes on.
      CHECK_THROWS_WITH(
          kit.session.allReduce({kit.model.variable(kTyped[0])}, ReduceOp::Sum, {.native = true}),
          Contains("NCCL needs one GPU per rank") && Contains(".native = false"));
      continue;
    }
    for (ReduceOp op :
         {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg}) {
      for (const char* name : kTyped) {
        Variable v = kit.model.variable(name);
        if (op == ReduceOp::Avg && !isFloating(v.dtype())) {
          CHECK_THROWS_WITH(kit.session.allReduce({v}, op), Contains("'avg' needs a floating"));
          continue;
        }
        INFO(name << " " << reduceOpName(op) << " on " << n << " ranks, native=" << native);
        const std::vector<double> want = expected(op, n, v.dtype());
        fill({});
        const Array reduced = kit.session.reduce({v}, op, false, {.native = native}).at(0);
        CHECK(asDoubles(reduced) == want);
        CHECK(asDoubles(v.getValue()) == rankValues(0));  // not in place: master unchanged
        kit.session.allReduce({v}, op, {.native = native});
        const Array all = kit.session.gather({v}, 1, {.native = native}).at(0);
        REQUIRE(all.shape() == Shape{n, 4});
        for (int r = 0; r < n; ++r) {
          CHECK(asDoubles(Array::copyOf(all.view().row(r))) == want);
        }
      }
    }
  }
}

TEST_CASE("all_reduce and reduce: every op on every dtype, 2 ranks", "[core][coll]") {
  checkEveryOp(2);
}

TEST_CASE("all_reduce and reduce: every op on every dtype, 3 ranks", "[core][coll]") {
  checkEveryOp(3);
}

void checkReduceInPlace(int master) {
  Kit kit(3, {.master_rank = master});
  Variable v = kit.model.variable("var_f64");
  kit.session.function(kit.model, "fill_ranked")({});
  kit.session.reduce({v}, ReduceOp::Sum);
  const Array all = kit.session.gather({v}).at(0);
  for (int r = 0; r < 3; ++r) {
    const std::vector<double> row = asDoubles(Array::copyOf(all.view().row(r)));
    CHECK(row == (r == master ? expected(ReduceOp::Sum, 3, DType::Float64) : rankValues(r)));
  }
  CHECK(asDoubles(v.getValue()) == expected(ReduceOp::Sum, 3, DType::Float64));
  kit.session.broadcast({v});
  CHECK(asDoubles(kit.session.gather({v}).at(0)) ==
        std::vector<double>{6, 12, 18, 24, 6, 12, 18, 24, 6, 12, 18, 24});
  kit.session.broadcast({v}, {Array::vector<double>({9, 8})});  // a new shape too
  CHECK(kit.session.getShapes({v}).at(0) == std::vector<Shape>{{2}, {2}, {2}});
  CHECK(asDoubles(kit.session.getValue(2, {v}).at(0)) == std::vector<double>{9, 8});
}

TEST_CASE("reduce in place changes only the master (rank 0), broadcast makes ranks equal",
          "[core][coll]") {
  checkReduceInPlace(0);
}

TEST_CASE("reduce in place changes only the master (rank 1), broadcast makes ranks equal",
          "[core][coll]") {
  checkReduceInPlace(1);
}

TEST_CASE("ranks holding different shapes: exact concatenation or a clear error", "[core][coll]") {
  Kit kit(2);
  Variable v = kit.model.variable("v");
  Array rows(DType::Float32, {5, 2});
  for (int i = 0; i < 10; ++i)
    rows.as<float>()[i] = float(i);
  kit.session.scatter({v}, {kit.session.data(rows)});
  CHECK(kit.session.getLengths({v}) == std::vector<std::vector<int64_t>>{{3, 2}});
  const Array cat = kit.session.gather({v}, 0).at(0);
  CHECK(cat.shape() == Shape{5, 2});
  CHECK(cat.toVector<float>() == rows.toVector<float>());
  CHECK_THROWS_WITH(kit.session.gather({v}, 1),
                    Contains("shapes differ: (3, 2) on rank 0, (2, 2) on rank 1"));
  CHECK_THROWS_WITH(kit.session.allReduce({v}, ReduceOp::Sum), Contains("reduce needs equal"));
  kit.session.allGather({v});
  CHECK(kit.session.getLengths({v}) == std::vector<std::vector<int64_t>>{{5, 5}});
  const Array stacked = kit.session.gather({v}, 1).at(0);
  CHECK(stacked.shape() == Shape{2, 5, 2});
  std::vector<float> twice = rows.toVector<float>();
  twice.insert(twice.end(), twice.begin(), twice.end());
  CHECK(stacked.toVector<float>() == twice);
  // Trailing dimensions must agree for a concatenation.
  kit.session.setValue(1, {v}, {kit.session.data(Array(DType::Float32, {2, 3}))});
  CHECK_THROWS_WITH(kit.session.gather({v}, 0), Contains("trailing dimensions differ"));
  CHECK_THROWS_WITH(kit.session.allGather({v}), Contains("trailing dimensions differ"));
}

TEST_CASE("scatter, set_value and get_value with every batch form", "[core][coll]") {
  Kit kit(3);
  Variable v = kit.model.variable("v");
  Array rows(DType::Float32, {10, 2});
  for (int i = 0; i < 20; ++i)
    rows.as<float>()[i] = float(i);
  Data data = kit.session.data(rows);
  auto pick = [&](const std::vector<int64_t>& which) {
    std::vector<float> out;
    for (int64_t r : which) {
      out.push_back(rows.get({r, 0}));
      out.push_back(rows.get({r, 1}));
    }
    return out;
  };
  kit.session.scatter({v}, {data}, Selection::indices({9, 8, 1, 2, 3}));
  CHECK(kit.session.getLengths({v}) == std::vector<std::vector<int64_t>>{{2, 2, 1}});
  CHECK(kit.session.getValue(1, {v}).at(0).toVector<float>() == pick({1, 2}));
  kit.session.scatter({v}, {data}, Selection::range(4, 10));
  CHECK(kit.session.getValue(2, {v}).at(0).toVector<float>() == pick({8, 9}));
  kit.session.scatter({v}, {data}, Selection::count(3));
  CHECK(kit.session.gather({v}, 0).at(0).toVector<float>() == pick({0, 1, 2}));
  for (int r = 0; r < 3; ++r) {
    kit.session.setValue(r, {v}, {data}, Selection::indices({r, 7}));
  }
  for (int r = 0; r < 3; ++r) {
    CHECK(kit.session.getValue(r, {v}).at(0).toVector<float>() == pick({r, 7}));
  }
  CHECK(v.getValue().toVector<float>() == pick({0, 7}));  // the master's copy
}

// The master skips a collective's shape exchange while it knows every rank's shapes
// (SessionCore::knownUniformShape). Whatever changes a shape on any rank, in any step, must end
// that: a stale shape would reduce buffers of different sizes.
TEST_CASE("a collective sees shapes changed on any rank since the last one", "[core][coll]") {
  Kit kit(3);
  Variable v = kit.model.variable("v");
  Array rows(DType::Float32, {6, 2});
  for (int i = 0; i < 12; ++i)
    rows.as<float>()[i] = float(i);
  Data data = kit.session.data(rows);
  kit.session.scatter({v}, {data}, Selection::count(3));  // one row on every rank
  kit.session.allReduce({v}, ReduceOp::Sum);              // learns {1, 2} everywhere
  kit.session.allReduce({v}, ReduceOp::Sum);              // known: no exchange
  CHECK(kit.session.getValue(2, {v}).at(0).toVector<float>() ==
        std::vector<float>{3 * (0 + 2 + 4), 3 * (1 + 3 + 5)});
  // A step that changes one worker's shape only.
  kit.session.setValue(2, {v}, {data}, Selection::indices({4, 5}));
  CHECK_THROWS_WITH(kit.session.allReduce({v}, ReduceOp::Sum),
                    Contains("shapes differ") && Contains("on rank 2"));
  CHECK_THROWS_WITH(kit.session.reduce({v}, ReduceOp::Sum, false), Contains("shapes differ"));
  CHECK_THROWS_WITH(kit.session.gather({v}, 1), Contains("shapes differ"));
  // Uneven scatter: 2, 1, 1 rows.
  kit.session.scatter({v}, {data}, Selection::count(4));
  CHECK_THROWS_WITH(kit.session.allReduce({v}, ReduceOp::Sum), Contains("on rank 1"));
  CHECK(kit.session.gather({v}, 0).at(0).toVector<float>() ==
        std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  // Even again, learnt again, then changed by all_gather (every rank's shape grows).
  kit.session.scatter({v}, {data}, Selection::range(3, 6));
  kit.session.allReduce({v}, ReduceOp::Max);
  kit.session.allReduce({v}, ReduceOp::Max);
  kit.session.allGather({v});
  CHECK(kit.session.getShapes({v}) == std::vector<std::vector<Shape>>{{{3, 2}, {3, 2}, {3, 2}}});
  kit.session.allReduce({v}, ReduceOp::Sum);
  CHECK(kit.session.getValue(1, {v}).at(0).toVector<float>() ==
        std::vector<float>{30, 33, 30, 33, 30, 33});
  // The master's own copy, set outside any step.
  v.setValue(Array(DType::Float32, {2, 2}));
  CHECK_THROWS_WITH(kit.session.allReduce({v}, ReduceOp::Sum), Contains("shapes differ"));
}

TEST_CASE("collective argument errors", "[core][coll][errors]") {
  Kit kit(2);
  Variable v = kit.model.variable("var_i32");
  Variable f = kit.model.variable("var_f32");
  CHECK_THROWS_WITH(kit.session.allReduce({v}, ReduceOp::Avg),
                    Contains("all_reduce of variable 'var_i32'") && Contains("'avg' needs"));
  CHECK_THROWS_WITH(kit.session.reduce({f}, ReduceOp::Gather), Contains("not a collective op"));
  CHECK_THROWS_WITH(kit.session.gather({f}, 2), Contains("nd_up must be 0"));
  CHECK_THROWS_WITH(kit.session.getValue(2, {f}), Contains("rank 2 is not a rank of 2"));
  CHECK_THROWS_WITH(kit.session.allReduce({}), Contains("no variables"));
  Data wrong = kit.session.data(Array(DType::Float64, {4}));
  CHECK_THROWS_WITH(kit.session.scatter({f}, {wrong}),
                    Contains("Data #") && Contains("is float64") && Contains("float32"));
  CHECK_THROWS_WITH(kit.session.scatter({f, v}, {wrong}), Contains("1 value(s) for 2"));
  Data four = kit.session.data(Array(DType::Float32, {4}));
  CHECK_THROWS_WITH(kit.session.scatter({f}, {four}, Selection::range(2, 6)),
                    Contains("rows [2, 6) is out of range for length 4"));
  CHECK_THROWS_WITH(parseReduceOp("mean", "all_reduce"), Contains("unknown reduce op 'mean'"));
}

TEST_CASE("a bad shape after many variables fails the call before any variable changes",
          "[core][coll][errors]") {
  Kit kit(2);
  Variable s = kit.model.variable("s");  // [1, 1] on every rank
  Variable v = kit.model.variable("v");
  kit.session.scatter({v}, {kit.session.data(Array(DType::Float32, {5, 2}))});  // 3 and 2 rows
  // More shapes than one exchange carries: every one must be checked before the first moves.
  std::vector<Variable> vars(3000, s);
  vars.push_back(v);
  CHECK_THROWS_WITH(kit.session.allReduce(vars, ReduceOp::Sum),
                    Contains("variable 'v'") && Contains("reduce needs equal shapes"));
  CHECK(kit.session.gather({s}, 1).at(0).toVector<float>() == std::vector<float>{1, 1, 1, 1});
  vars.pop_back();  // the same call without the bad variable runs every all_reduce
  kit.session.allReduce(vars, ReduceOp::Max);
  CHECK(kit.session.gather({s}, 1).at(0).toVector<float>() == std::vector<float>{1, 1, 1, 1});
}

TEST_CASE("every value that goes in may be a plain array or a Data", "[core][coll]") {
  Kit kit(2);
  Variable v = kit.model.variable("v");
  Variable s = kit.model.variable("s");
  const Array rows = Array::of<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  // scatter and set_value of arrays (a uint8 array is cast safely to float32; rows as scatter
  // gives them: 2 on rank 0, 1 on rank 1).
  kit.session.scatter({v}, {rows.view()});
  CHECK(kit.session.gather({v}, 0).at(0).toVector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  const Array bytes = Array::of<uint8_t>({1, 2}, {7, 8});
  const std::vector<ArrayView> ints = {bytes};
  kit.session.setValue(1, {v}, ints);
  CHECK(kit.session.getValue(1, {v}).at(0).toVector<float>() == std::vector<float>{7, 8});
  kit.session.setValue(0, {v}, {rows.view()}, Selection::range(2, 3));
  CHECK(kit.session.getValue(0, {v}).at(0).toVector<float>() == std::vector<float>{4, 5});
  CHECK_THROWS_WITH(kit.session.scatter({v}, {Array::vector<double>({1, 2}).view()}),
                    Contains("float64") && Contains("float32"));
  // broadcast and Variable::setValue of a Data.
  Data pair = kit.session.data(Array::vector<float>({3, 4}));
  kit.session.broadcast({s}, {pair});
  CHECK(kit.session.gather({s}).at(0).toVector<float>() == std::vector<float>{3, 4, 3, 4});
  s.setValue(kit.session.data(Array::vector<float>({5, 6})));
  CHECK(s.getValue().toVector<float>() == std::vector<float>{5, 6});
  // a function called with arrays.
  Function dot = kit.session.function(kit.model, "mean_dot", {.broadcast = {"y"}});
  const Array x = Array::of<float>({2, 2}, {1, 2, 3, 4});
  const Array y = Array::vector<float>({1, 1});
  CHECK(dot({x, y}).at(0).toVector<float>() == std::vector<float>{5});
  CHECK(dot({kit.session.data(x), kit.session.data(y)}).at(0).toVector<float>() ==
        std::vector<float>{5});
}
