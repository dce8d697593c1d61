// One fused kernel per update rule (update_rules.h): each thread reads the step count once, then
// streams parameter, gradient and state in a grid-stride loop. The per-element arithmetic is the
// host's (update_math.h).
#include <cuda_runtime.h>

#include "synk/plugins/compute/cuda/cuda_launch.cuh"
#include "synk/plugins/compute/update_math.h"

namespace synk::compute::cuda {
namespace {

template <Rule kRule>
__global__ void updateKernel(Hyper h, UpdateArgs a, bool write_step) {
  constexpr bool kCounts = kRule == Rule::Adam || kRule == Rule::Adamax;
  const int64_t t = kCounts ? *a.step + 1 : 0;
  const update_math::Corrections c =
      kCounts ? update_math::corrections(h, t) : update_math::Corrections{};
  const float divisor = a.grad_divisor ? *a.grad_divisor : 1.0f;
  for (int64_t i = globalThread(); i < a.n; i += gridThreads())
    update_math::element<kRule>(h, c, a, divisor, i);
  if (kCounts && write_step && globalThread() == 0) {
    *a.step_out = update_math::steps(a, divisor) ? t : t - 1;
  }
}

// The counter in place: after every thread has read it (a separate launch).
__global__ void incrementKernel(int64_t* step, const float* divisor) {
  if (!divisor || *divisor > 0.0f) *step += 1;
}

template <Rule kRule>
void launch(void* stream, const Hyper& h, const UpdateArgs& a) {
  const bool in_place_step = a.step_out != nullptr && a.step_out == a.step;
  updateKernel<kRule><<<blocksFor(a.n), kThreads, 0, asStream(stream)>>>(h, a, !in_place_step);
  checkLaunch("update kernel");
  if (countsSteps(kRule) && in_place_step) {
    incrementKernel<<<1, 1, 0, asStream(stream)>>>(a.step_out, a.grad_divisor);
    checkLaunch("update step counter kernel");
  }
}

}  // namespace

void applyUpdate(void* stream, Rule rule, const Hyper& hyper, const UpdateArgs& args) {
  update_math::withRule(rule, [&](auto r) { launch<decltype(r)::value>(stream, hyper, args); });
}

}  // namespace synk::compute::cuda
