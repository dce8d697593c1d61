// Host initialisers and their dispatch (init.h).
#include <cmath>

#include "synk/plugins/compute/init.h"
#include "synk/plugins/compute/init_hash.h"

namespace synk::compute {

namespace host {

void uniform(float* out, int64_t n, const InitArgs& g) {
  const float width = g.b - g.a;
  for (int64_t i = 0; i < n; ++i)
    out[i] = std::fma(init_hash::unit(g.seed, g.offset + static_cast<uint64_t>(i)), width, g.a);
}

void normal(float* out, int64_t n, const InitArgs& g) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = std::fma(init_hash::normal(g.seed, g.offset + static_cast<uint64_t>(i)), g.b, g.a);
}

}  // namespace host

void uniform(const Device& device, float* out, int64_t n, const InitArgs& args) {
  device.cuda ? cuda::uniform(device.stream, out, n, args) : host::uniform(out, n, args);
}

void normal(const Device& device, float* out, int64_t n, const InitArgs& args) {
  device.cuda ? cuda::normal(device.stream, out, n, args) : host::normal(out, n, args);
}

}  // namespace synk::compute
