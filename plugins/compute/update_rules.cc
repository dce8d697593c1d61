// Rule names and defaults, argument checks, dispatch, and the host loop (update_rules.h).
#include "synk/plugins/compute/update_rules.h"

#include "synk/plugins/compute/update_math.h"

namespace synk::compute {
namespace {

struct RuleInfo {
  Rule rule;
  const char* name;
  int states;
  const char* state_names[2];
};

constexpr RuleInfo kRules[] = {
    {Rule::Sgd, "sgd", 0, {}},
    {Rule::Momentum, "momentum", 1, {"velocity"}},
    {Rule::Nesterov, "nesterov", 1, {"velocity"}},
    {Rule::Adagrad, "adagrad", 1, {"sum_sq"}},
    {Rule::Rmsprop, "rmsprop", 1, {"sq_avg"}},
    {Rule::Adadelta, "adadelta", 2, {"sq_avg", "delta_sq_avg"}},
    {Rule::Adam, "adam", 2, {"m", "v"}},
    {Rule::Adamax, "adamax", 2, {"m", "u"}},
};

const RuleInfo& info(Rule rule) {
  for (const RuleInfo& r : kRules) {
    if (r.rule == rule) return r;
  }
  throw sdk::Error(sdk::Status::InvalidArgument, "unknown update rule");
}

template <Rule kRule>
void hostPass(const Hyper& h, const UpdateArgs& a) {
  int64_t t = 0;
  if (countsSteps(kRule)) t = *a.step + 1;
  const update_math::Corrections c =
      countsSteps(kRule) ? update_math::corrections(h, t) : update_math::Corrections{};
  const float divisor = a.grad_divisor ? *a.grad_divisor : 1.0f;
  for (int64_t i = 0; i < a.n; ++i)
    update_math::element<kRule>(h, c, a, divisor, i);
  if (countsSteps(kRule)) *a.step_out = update_math::steps(a, divisor) ? t : t - 1;
}

}  // namespace

Rule parseRule(const std::string& name) {
  for (const RuleInfo& r : kRules) {
    if (name == r.name) return r.rule;
  }
  std::string names;
  for (const RuleInfo& r : kRules)
    names += std::string(names.empty() ? "" : ", ") + r.name;
  throw sdk::Error(sdk::Status::InvalidArgument,
                   "unknown update rule '" + name + "' (" + names + ")");
}

const char* ruleName(Rule rule) {
  return info(rule).name;
}

std::vector<std::string> ruleNames() {
  std::vector<std::string> out;
  for (const RuleInfo& r : kRules)
    out.emplace_back(r.name);
  return out;
}

std::vector<std::string> stateNames(Rule rule) {
  const RuleInfo& r = info(rule);
  return std::vector<std::string>(r.state_names, r.state_names + r.states);
}

bool countsSteps(Rule rule) {
  return rule == Rule::Adam || rule == Rule::Adamax;
}

Hyper defaultHyper(Rule rule) {
  Hyper h;
  switch (rule) {
    case Rule::Sgd:
    case Rule::Momentum:
    case Rule::Nesterov:
      h.lr = 1e-3f;
      break;
    case Rule::Adagrad:
      h.lr = 1e-2f;
      h.eps = 1e-10f;
      break;
    case Rule::Rmsprop:
      h.lr = 1e-2f;
      break;
    case Rule::Adadelta:
      h.lr = 1.0f;
      h.eps = 1e-6f;
      break;
    case Rule::Adam:
      h.lr = 1e-3f;
      break;
    case Rule::Adamax:
      h.lr = 2e-3f;
      break;
  }
  return h;
}

void applyUpdate(const Device& device, Rule rule, const Hyper& hyper, const UpdateArgs& args) {
  const int states = info(rule).states;
  for (int k = 0; k < 2; ++k) {
    if (k < states && (!args.state[k] || !args.state_out[k])) {
      throw sdk::Error(sdk::Status::InvalidArgument, std::string("update rule ") + ruleName(rule) +
                                                         " needs state " + std::to_string(k) +
                                                         " ('" + info(rule).state_names[k] + "')");
    }
  }
  if (countsSteps(rule) && (!args.step || !args.step_out)) {
    throw sdk::Error(sdk::Status::InvalidArgument,
                     std::string("update rule ") + ruleName(rule) + " needs a step counter");
  }
  if (args.n > 0 && (!args.param || !args.param_out || !args.grad)) {
    throw sdk::Error(sdk::Status::InvalidArgument, "update: null parameter or gradient");
  }
  device.cuda ? cuda::applyUpdate(device.stream, rule, hyper, args)
              : host::applyUpdate(rule, hyper, args);
}

namespace host {

void applyUpdate(Rule rule, const Hyper& hyper, const UpdateArgs& args) {
  update_math::withRule(rule, [&](auto r) { hostPass<decltype(r)::value>(hyper, args); });
}

}  // namespace host
}  // namespace synk::compute
