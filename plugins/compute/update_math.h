#pragma once
// Private to plugins/compute: the per-element arithmetic of every update rule, one definition
// for the host loop and the CUDA kernel (host and device function under nvcc).
#include <math.h>
#include <type_traits>

#include "synk/plugins/compute/update_rules.h"

#if defined(__CUDACC__)
#define SYNK_COMPUTE_HOST_DEVICE __host__ __device__
#else
#define SYNK_COMPUTE_HOST_DEVICE
#endif

namespace synk::compute::update_math {

// Per step: 1 - beta^t for adam and adamax (from the step count in device memory).
struct Corrections {
  float bias1 = 1;
  float bias2_sqrt = 1;
};

SYNK_COMPUTE_HOST_DEVICE inline Corrections corrections(const Hyper& h, int64_t t) {
  Corrections c;
  c.bias1 = 1.0f - powf(h.beta1, static_cast<float>(t));
  c.bias2_sqrt = sqrtf(1.0f - powf(h.beta2, static_cast<float>(t)));
  return c;
}

// One element: p, s0, s1 in, new values out.
template <Rule kRule>
SYNK_COMPUTE_HOST_DEVICE inline void step(const Hyper& h, const Corrections& c, float g, float& p,
                                          float& s0, float& s1) {
  if constexpr (kRule == Rule::Sgd) {
    p -= h.lr * g;
  } else if constexpr (kRule == Rule::Momentum) {
    s0 = h.momentum * s0 + g;
    p -= h.lr * s0;
  } else if constexpr (kRule == Rule::Nesterov) {
    s0 = h.momentum * s0 + g;
    p -= h.lr * (g + h.momentum * s0);
  } else if constexpr (kRule == Rule::Adagrad) {
    s0 += g * g;
    p -= h.lr * g / (sqrtf(s0) + h.eps);
  } else if constexpr (kRule == Rule::Rmsprop) {
    s0 = h.alpha * s0 + (1.0f - h.alpha) * g * g;
    p -= h.lr * g / (sqrtf(s0) + h.eps);
  } else if constexpr (kRule == Rule::Adadelta) {
    s0 = h.rho * s0 + (1.0f - h.rho) * g * g;
    const float delta = sqrtf(s1 + h.eps) / sqrtf(s0 + h.eps) * g;
    s1 = h.rho * s1 + (1.0f - h.rho) * delta * delta;
    p -= h.lr * delta;
  } else if constexpr (kRule == Rule::Adam) {
    s0 = h.beta1 * s0 + (1.0f - h.beta1) * g;
    s1 = h.beta2 * s1 + (1.0f - h.beta2) * g * g;
    p -= (h.lr / c.bias1) * s0 / (sqrtf(s1) / c.bias2_sqrt + h.eps);
  } else if constexpr (kRule == Rule::Adamax) {
    s0 = h.beta1 * s0 + (1.0f - h.beta1) * g;
    s1 = fmaxf(h.beta2 * s1, fabsf(g) + h.eps);
    p -= (h.lr / c.bias1) * s0 / s1;
  }
}

// Whether a pass steps at all (see UpdateArgs::grad_divisor).
SYNK_COMPUTE_HOST_DEVICE inline bool steps(const UpdateArgs& a, float divisor) {
  return !a.grad_divisor || divisor > 0.0f;
}

// Element i of a pass: reads everything first, so outputs may alias inputs.
template <Rule kRule>
SYNK_COMPUTE_HOST_DEVICE inline void element(const Hyper& h, const Corrections& c,
                                             const UpdateArgs& a, float divisor, int64_t i) {
  float p = a.param[i];
  float s0 = a.state[0] ? a.state[0][i] : 0.0f;
  float s1 = a.state[1] ? a.state[1][i] : 0.0f;
  if (steps(a, divisor)) {
    step<kRule>(h, c, a.grad_divisor ? a.grad[i] / divisor : a.grad[i], p, s0, s1);
  }
  a.param_out[i] = p;
  if (a.state_out[0]) a.state_out[0][i] = s0;
  if (a.state_out[1]) a.state_out[1][i] = s1;
}

// Calls f(std::integral_constant<Rule, r>{}) for the run-time `rule`: the one switch from a
// rule to its compiled pass, shared by the host loop and the CUDA kernels.
template <typename F>
inline void withRule(Rule rule, F&& f) {
  switch (rule) {
    case Rule::Sgd:
      return f(std::integral_constant<Rule, Rule::Sgd>{});
    case Rule::Momentum:
      return f(std::integral_constant<Rule, Rule::Momentum>{});
    case Rule::Nesterov:
      return f(std::integral_constant<Rule, Rule::Nesterov>{});
    case Rule::Adagrad:
      return f(std::integral_constant<Rule, Rule::Adagrad>{});
    case Rule::Rmsprop:
      return f(std::integral_constant<Rule, Rule::Rmsprop>{});
    case Rule::Adadelta:
      return f(std::integral_constant<Rule, Rule::Adadelta>{});
    case Rule::Adam:
      return f(std::integral_constant<Rule, Rule::Adam>{});
    case Rule::Adamax:
      return f(std::integral_constant<Rule, Rule::Adamax>{});
  }
}

}  // namespace synk::compute::update_math
