// libFuzzer entry point for the experiment parser (built only with clang: SYNK_FUZZ=ON).
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DSYNK_FUZZ=ON && \
//   cmake --build build-fuzz --target config_fuzz && build-fuzz/bin/config_fuzz experiments/
#include <cstddef>
#include <cstdint>

#include "tests/harness/config/config_fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  synk::harness::test::parseFuzzInput(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
