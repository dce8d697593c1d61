#pragma once
// One fuzzing input for the config parser: any text, any overrides. The parser must return an
// Experiment or throw BadInput, never anything else, never crash. libFuzzer drives it in
// config_fuzz.cc (a clang build); config_test.cc's property test drives it with mutations in CI.
#include <string>
#include <vector>

#include "synk/harness/base/errors.h"
#include "synk/harness/config/config.h"

namespace synk::harness::test {

// Returns true when the text parsed, false when it was refused with BadInput.
inline bool parseFuzzInput(const std::string& text,
                           const std::vector<std::string>& overrides = {}) {
  try {
    const Experiment e = parseExperiment(text, "fuzz.ini", overrides);
    (void)e.canonical();
    return true;
  } catch (const BadInput&) {
    return false;
  }
}

}  // namespace synk::harness::test
