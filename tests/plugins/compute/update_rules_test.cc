// Every update rule against a straightforward double-precision transcription of torch.optim's
// documented algorithm, over several steps; the gradient divisor, in-place updates and missing
// state.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "synk/plugins/compute/update_rules.h"

namespace synk::compute {
namespace {

// torch.optim, one parameter, written out plainly (t counts from 1).
struct Reference {
  Rule rule;
  Hyper h;
  double p, s0 = 0, s1 = 0;
  int t = 0;

  void step(double g) {
    ++t;
    switch (rule) {
      case Rule::Sgd:
        p -= h.lr * g;
        break;
      case Rule::Momentum:
        s0 = t == 1 ? g : h.momentum * s0 + g;
        p -= h.lr * s0;
        break;
      case Rule::Nesterov:
        s0 = t == 1 ? g : h.momentum * s0 + g;
        p -= h.lr * (g + h.momentum * s0);
        break;
      case Rule::Adagrad:
        s0 += g * g;
        p -= h.lr * g / (std::sqrt(s0) + h.eps);
        break;
      case Rule::Rmsprop:
        s0 = h.alpha * s0 + (1 - h.alpha) * g * g;
        p -= h.lr * g / (std::sqrt(s0) + h.eps);
        break;
      case Rule::Adadelta: {
        s0 = h.rho * s0 + (1 - h.rho) * g * g;
        const double delta = std::sqrt(s1 + h.eps) / std::sqrt(s0 + h.eps) * g;
        s1 = h.rho * s1 + (1 - h.rho) * delta * delta;
        p -= h.lr * delta;
        break;
      }
      case Rule::Adam: {
        s0 = h.beta1 * s0 + (1 - h.beta1) * g;
        s1 = h.beta2 * s1 + (1 - h.beta2) * g * g;
        const double m_hat = s0 / (1 - std::pow(double(h.beta1), t));
        const double v_hat = s1 / (1 - std::pow(double(h.beta2), t));
        p -= h.lr * m_hat / (std::sqrt(v_hat) + h.eps);
        break;
      }
      case Rule::Adamax: {
        s0 = h.beta1 * s0 + (1 - h.beta1) * g;
        s1 = std::max(h.beta2 * s1, std::fabs(g) + h.eps);
        p -= h.lr / (1 - std::pow(double(h.beta1), t)) * s0 / s1;
        break;
      }
    }
  }
};

TEST_CASE("every update rule follows torch.optim's algorithm over several steps",
          "[plugins][compute]") {
  const std::string name = GENERATE(from_range(ruleNames()));
  const Rule rule = parseRule(name);
  INFO(name);
  Hyper h = defaultHyper(rule);
  h.lr *= 3;  // visible steps
  const int64_t n = 37;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist;
  std::vector<float> param(n), grad(n);
  std::vector<std::vector<float>> state(2, std::vector<float>(n, 0));
  std::vector<Reference> ref;
  for (int64_t i = 0; i < n; ++i) {
    param[i] = dist(rng);
    ref.push_back({rule, h, param[i]});
  }
  const auto states = stateNames(rule);
  int64_t step = 0;
  const float divisor = 8;
  for (int k = 0; k < 6; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      grad[i] = dist(rng) * divisor;  // a sum over 8 samples; the update divides
      ref[i].step(double(grad[i]) / divisor);
    }
    UpdateArgs a;
    a.n = n;
    a.param = param.data();
    a.param_out = param.data();
    a.grad = grad.data();
    a.grad_divisor = &divisor;
    for (size_t s = 0; s < states.size(); ++s) {
      a.state[s] = state[s].data();
      a.state_out[s] = state[s].data();
    }
    a.step = &step;
    a.step_out = &step;
    applyUpdate(hostDevice(), rule, h, a);
  }
  CHECK(step == (countsSteps(rule) ? 6 : 0));
  for (int64_t i = 0; i < n; ++i) {
    INFO("element " << i);
    REQUIRE(param[i] == Approx(ref[i].p).epsilon(2e-5).margin(1e-6));
    if (!states.empty()) REQUIRE(state[0][i] == Approx(ref[i].s0).epsilon(2e-5).margin(1e-6));
    if (states.size() > 1) REQUIRE(state[1][i] == Approx(ref[i].s1).epsilon(2e-5).margin(1e-6));
  }
}

TEST_CASE("an update rule refuses to run without its state", "[plugins][compute]") {
  std::vector<float> p(4), g(4);
  UpdateArgs a;
  a.n = 4;
  a.param = p.data();
  a.param_out = p.data();
  a.grad = g.data();
  CHECK_THROWS_WITH(applyUpdate(hostDevice(), Rule::Adam, {}, a),
                    "update rule adam needs state 0 ('m')");
  CHECK_THROWS_WITH(parseRule("lamb"),
                    "unknown update rule 'lamb' (sgd, momentum, nesterov, adagrad, rmsprop, "
                    "adadelta, adam, adamax)");
  CHECK(stateNames(Rule::Adadelta) == std::vector<std::string>{"sq_avg", "delta_sq_avg"});
}

}  // namespace
}  // namespace synk::compute

namespace synk::compute {
namespace {

TEST_CASE("a divisor that is not positive makes every update rule an identity",
          "[plugins][compute]") {
  const std::string name = GENERATE(from_range(ruleNames()));
  INFO(name);
  const std::vector<float> p0 = {1, -2, 3}, s0 = {0.5f, 0.25f, 2}, s1 = {1, 1, 1}, g = {3, 1, -2};
  std::vector<float> p(3), a(3), b(3);
  int64_t step = 4, step_out = -1;
  for (const float divisor : {0.0f, -INFINITY}) {
    UpdateArgs args;
    args.n = 3;
    args.param = p0.data();
    args.param_out = p.data();
    args.grad = g.data();
    args.grad_divisor = &divisor;
    args.state[0] = s0.data();
    args.state[1] = s1.data();
    args.state_out[0] = a.data();
    args.state_out[1] = b.data();
    args.step = &step;
    args.step_out = &step_out;
    applyUpdate(hostDevice(), parseRule(name), defaultHyper(parseRule(name)), args);
    CHECK(p == p0);
    CHECK(a == s0);
    CHECK(b == s1);
    if (countsSteps(parseRule(name))) CHECK(step_out == 4);
  }
}

}  // namespace
}  // namespace synk::compute
