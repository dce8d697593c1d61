#pragma once
// The testkit's row_stats bound with a different op on each of its outputs (col_mean keeps the
// default, avg), shared by the suites that check reductions.
#include "synk/core/session.h"

namespace synk::test {

inline FunctionOptions rowStatsAllOps() {
  return {.outputs = {{"col_sum", "sum"},
                      {"col_prod", "prod"},
                      {"col_max", "max"},
                      {"col_min", "min"},
                      {"rows", "gather"},
                      {"first", "none"},
                      {"n_rows", "sum"}}};
}

}  // namespace synk::test
