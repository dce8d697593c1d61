#pragma once
// Deterministic initialisers: the same values on the host and on the GPU, on every rank, whatever
// the order of evaluation (plugins/compute/init_hash.h). Element i of `out` is value `offset + i`
// of stream `seed`, so a flat parameter vector can be filled piece by piece.
#include <cstdint>

#include "synk/plugins/compute/device.h"

namespace synk::compute {

struct InitArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;  // index of out[0] in the stream
  float a = 0;          // uniform: low; normal: mean
  float b = 1;          // uniform: high; normal: standard deviation
};

// Uniform on [low, high).
void uniform(const Device& device, float* out, int64_t n, const InitArgs& args);
// Approximately normal (Irwin-Hall of four), truncated at 3.46 standard deviations.
void normal(const Device& device, float* out, int64_t n, const InitArgs& args);

namespace host {
void uniform(float* out, int64_t n, const InitArgs& args);
void normal(float* out, int64_t n, const InitArgs& args);
}  // namespace host

namespace cuda {
void uniform(void* stream, float* out, int64_t n, const InitArgs& args);
void normal(void* stream, float* out, int64_t n, const InitArgs& args);
}  // namespace cuda

}  // namespace synk::compute
