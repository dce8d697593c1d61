#include "synk/plugins/mlp/mlp_config.h"

#include <cmath>

#include "synk/plugins/compute/init.h"

namespace synk::mlp {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw sdk::Error(sdk::Status::InvalidArgument, message);
}

}  // namespace

Config Config::fromOptions(const sdk::Options& o) {
  Config c;
  const int64_t inputs = o.getInt("inputs", 784, "features per sample");
  const std::vector<int64_t> widths =
      o.getIntList("widths", {256, 128}, "hidden layer widths, comma-separated (depth = count)");
  const int64_t classes = o.getInt("classes", 10, "number of classes");
  require(inputs > 0, "option 'inputs' must be positive");
  require(classes > 0, "option 'classes' must be positive");
  c.dims.push_back(inputs);
  for (int64_t w : widths) {
    require(w > 0, "option 'widths' has a width " + std::to_string(w) + "; widths are positive");
    c.dims.push_back(w);
  }
  c.dims.push_back(classes);
  c.precision = compute::parsePrecision(
      o.getChoice("precision", "fp32", {"fp32", "tf32", "bf16"}, "GEMM arithmetic on CUDA"));
  c.rule = compute::parseRule(
      o.getChoice("optimizer", "sgd", compute::ruleNames(), "update rule (torch.optim's)"));
  const compute::Hyper defaults = compute::defaultHyper(c.rule);
  c.hyper = defaults;
  c.hyper.lr = static_cast<float>(o.getDouble("lr", defaults.lr, "learning rate"));
  c.hyper.momentum =
      static_cast<float>(o.getDouble("momentum", defaults.momentum, "momentum, nesterov"));
  c.hyper.eps = static_cast<float>(o.getDouble("eps", defaults.eps, "the rule's epsilon"));
  require(c.hyper.lr > 0, "option 'lr' must be positive");
  const int64_t seed = o.getInt("seed", 0, "parameter initialisation stream");
  require(seed >= 0, "option 'seed' must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  c.bucket_bytes = o.getInt("bucket_bytes", int64_t{4} << 20,
                            "gradient all-reduce bucket size (0: one all-reduce after backward)");
  require(c.bucket_bytes >= 0, "option 'bucket_bytes' must be >= 0");
  c.reduce_in_grad = o.getChoice("grad_reduce", "in_call", {"in_call", "none"},
                                 "grad(): all-reduce the gradient itself (exact on uneven "
                                 "shares) or leave each rank's mean gradient") == "in_call";
  c.cuda_graph = o.getBool("cuda_graph", true, "replay train_step as a CUDA graph (1 rank)");
  const std::string gemm =
      o.getChoice("gemm", "lt", {"cublas", "lt", "lt_tuned"},
                  "GEMMs on CUDA: cublasGemmEx, cuBLASLt with fused epilogues (heuristic "
                  "algorithm), or cuBLASLt with algorithms timed on first use");
  c.gemm = gemm == "cublas" ? GemmPath::Cublas : (gemm == "lt" ? GemmPath::Lt : GemmPath::LtTuned);
  c.fuse_update = o.getBool("fuse_update", true,
                            "sgd on one rank: update params inside the weight-gradient GEMMs");
  const std::string exchange = o.getChoice(
      "exchange", "auto", {"auto", "gradient", "rows"},
      "train_step on several ranks: all-reduce the gradient, all-gather each layer's rows, or "
      "rows where they are at most 1/" +
          std::to_string(kRowsRatio) + " of the gradient's bytes (CUDA)");
  c.exchange = exchange == "auto"       ? Exchange::Auto
               : exchange == "gradient" ? Exchange::Gradient
                                        : Exchange::Rows;
  return c;
}

int64_t Config::offset(int l) const {
  int64_t at = 0;
  for (int k = 0; k < l; ++k)
    at += (dims[k] + 1) * dims[k + 1];
  return at;
}

void Config::initialParameters(float* out) const {
  for (int l = 0; l < layers(); ++l) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(dims[l]));
    const int64_t begin = offset(l);
    compute::host::uniform(out + begin, offset(l + 1) - begin,
                           {seed, static_cast<uint64_t>(begin), -bound, bound});
  }
}

}  // namespace synk::mlp
