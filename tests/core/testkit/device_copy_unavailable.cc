#include <cstring>

#include "tests/core/testkit/device_copy.h"

namespace testkit {
namespace {
void check(const synk::sdk::Context& context) {
  if (context.isCuda()) {
    throw synk::sdk::Error(synk::sdk::Status::Unsupported, "the testkit was built without CUDA");
  }
}
}  // namespace

void toHost(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes) {
  check(context);
  if (bytes) std::memcpy(dst, src, bytes);
}

void toDevice(const synk::sdk::Context& context, void* dst, const void* src, size_t bytes) {
  check(context);
  if (bytes) std::memcpy(dst, src, bytes);
}

void zero(const synk::sdk::Context& context, void* dst, size_t bytes) {
  check(context);
  if (bytes) std::memset(dst, 0, bytes);
}

}  // namespace testkit
