// CallOptions::output_subset (Theano's output_subset): only the named outputs are returned, in
// the order named; the others are not reduced, and a plugin may skip computing them.
#include <catch2/catch.hpp>

#include "tests/core/testkit/row_stats_ops.h"
#include "tests/support/session_fixture.h"

using namespace synk;
using Catch::Contains;
using test::Kit;

namespace {

Array table(int64_t rows, int64_t cols) {
  Array x(DType::Float64, {rows, cols});
  for (int64_t i = 0; i < x.size(); ++i)
    x.as<double>()[i] = double(i + 1);
  return x;
}

}  // namespace

TEST_CASE("output_subset returns the named outputs in the order named", "[core]") {
  Kit kit(3);
  // row_stats computes only the outputs the call wants (Call::wants): a left-out output it
  // skipped would fail the call as "returned without producing output" if it were wanted.
  Function stats = kit.session.function(kit.model, "row_stats", test::rowStatsAllOps());
  for (int64_t cols : {2, 600}) {  // inline reduction and through the communicator
    INFO(cols << " columns");
    Data x = kit.session.data(table(10, cols));
    const std::vector<Array> all = stats({x});
    const std::vector<Array> some =
        stats({x}, {.num_slices = 2, .output_subset = {"n_rows", "col_sum", "rows"}});
    REQUIRE(some.size() == 3);
    CHECK(some[0].toVector<int64_t>() == all[7].toVector<int64_t>());
    CHECK(some[1].toVector<double>() == all[1].toVector<double>());
    CHECK(some[2].toVector<double>() == all[5].toVector<double>());
    const std::vector<Array> one = stats({x}, {.output_subset = {"col_mean"}});
    REQUIRE(one.size() == 1);
    CHECK(one[0].toVector<double>() == all[0].toVector<double>());
  }
}

TEST_CASE("outputs left out of output_subset are not reduced", "[core]") {
  Kit kit(2);
  // "ranked" has a different shape on every rank: avg cannot reduce it, but nobody asks to.
  Function pair = kit.session.function(kit.model, "ranked_pair");
  CHECK_THROWS_WITH(pair({}), Contains("output 'ranked'") && Contains("reduce needs equal shapes"));
  const std::vector<Array> same = pair({}, {.output_subset = {"same"}});
  REQUIRE(same.size() == 1);
  CHECK(same[0].toVector<double>() == std::vector<double>{1.0});
}

TEST_CASE("output_subset names only outputs, each once", "[core][errors]") {
  Kit kit(2);
  Function pair = kit.session.function(kit.model, "ranked_pair");
  CHECK_THROWS_WITH(pair({}, {.output_subset = {"nope"}}),
                    Contains("output_subset names 'nope', which is not an output") &&
                        Contains("outputs: same, ranked"));
  CHECK_THROWS_WITH(pair({}, {.output_subset = {"same", "same"}}),
                    Contains("output_subset names 'same' twice"));
  CHECK(pair({}, {.output_subset = {"same"}}).size() == 1);  // still usable
}
