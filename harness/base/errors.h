#pragma once
// The two ways synk-bench fails, mapped to its exit codes by the CLI (cli.cc):
//   BadInput  (2): the config, the command line or the database is wrong; nothing was changed.
//   RunFailed (3): a run started and could not complete (a point failed, the disk filled up).
// `compare` adds 1: a regression (and uses 3 for an incomplete or incomparable compare).
#include <stdexcept>
#include <string>

namespace synk::harness {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRegression = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRunFailed = 3;

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RunFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace synk::harness
