#pragma once
// Update rules on flat float32 vectors, as torch.optim defines them (no weight decay): one fused
// pass over parameter, gradient and state per step — a host loop, or one CUDA kernel.
//
//   sgd       p -= lr g
//   momentum  v = mu v + g;                          p -= lr v
//   nesterov  v = mu v + g;                          p -= lr (g + mu v)
//   adagrad   s += g^2;                              p -= lr g / (sqrt(s) + eps)
//   rmsprop   s = alpha s + (1 - alpha) g^2;         p -= lr g / (sqrt(s) + eps)
//   adadelta  s = rho s + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(s + eps) g;
//             u = rho u + (1 - rho) d^2;             p -= lr d
//   adam      m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//             p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//   adamax    m = b1 m + (1 - b1) g;  u = max(b2 u, |g| + eps);   p -= lr / (1 - b1^t) m / u
//
// t counts steps from 1; it lives in device memory (an int64 the update reads and writes t + 1
// to), so a captured CUDA graph replays correctly. The gradient may be divided by a device scalar
// on the fly (a sum of per-sample gradients divided by the number of samples); a divisor that is
// not positive (no samples anywhere, or a batch flagged invalid) makes the step an identity:
// parameters, state and t are written back unchanged.
#include <cstdint>
#include <string>
#include <vector>

#include "synk/plugins/compute/device.h"

namespace synk::compute {

enum class Rule { Sgd, Momentum, Nesterov, Adagrad, Rmsprop, Adadelta, Adam, Adamax };

Rule parseRule(const std::string& name);  // "sgd", ..., "adamax"
const char* ruleName(Rule rule);
std::vector<std::string> ruleNames();
// Names of the rule's state vectors (each as long as the parameters), in UpdateArgs order.
std::vector<std::string> stateNames(Rule rule);
// Whether it counts steps (adam, adamax: bias correction).
bool countsSteps(Rule rule);

struct Hyper {
  float lr = 0.01f;
  float momentum = 0.9f;  // momentum, nesterov
  float alpha = 0.99f;    // rmsprop
  float rho = 0.9f;       // adadelta
  float beta1 = 0.9f;     // adam, adamax
  float beta2 = 0.999f;   // adam, adamax
  float eps = 1e-8f;      // adagrad: 1e-10 and adadelta: 1e-6 are torch's defaults (defaultHyper)
};
// torch.optim's defaults for the rule (adadelta: lr 1).
Hyper defaultHyper(Rule rule);

struct UpdateArgs {
  int64_t n = 0;
  const float* param = nullptr;
  float* param_out = nullptr;  // may equal param
  const float* grad = nullptr;
  const float* grad_divisor = nullptr;  // device scalar, or null: use grad as is
  const float* state[2] = {nullptr, nullptr};
  float* state_out[2] = {nullptr, nullptr};  // may equal state
  const int64_t* step = nullptr;  // device scalar t - 1 (steps taken so far): adam, adamax
  int64_t* step_out = nullptr;    // gets t (may equal step)
};

// Throws sdk::Error(InvalidArgument) when a state or step pointer the rule needs is missing.
void applyUpdate(const Device& device, Rule rule, const Hyper& hyper, const UpdateArgs& args);

namespace host {
void applyUpdate(Rule rule, const Hyper& hyper, const UpdateArgs& args);
}
namespace cuda {
void applyUpdate(void* stream, Rule rule, const Hyper& hyper, const UpdateArgs& args);
}

}  // namespace synk::compute
