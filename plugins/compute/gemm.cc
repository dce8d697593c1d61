// gemm(): argument checks, then the host kernel, cublasGemmEx or cuBLASLt; epilogues that the
// chosen path does not fuse run as kernels after the product.
#include "synk/plugins/compute/gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "synk/plugins/compute/gemm_lt.h"
#include "synk/plugins/compute/kernels.h"

namespace synk::compute {
namespace {

// The message is built only when the check fails: gemm runs a dozen times a step.
template <typename Message>
void require(bool ok, Message&& what) {
  if (ok) return;
  if constexpr (std::is_invocable_v<Message>) {
    throw sdk::Error(sdk::Status::InvalidArgument, "gemm: " + std::string(what()));
  } else {
    throw sdk::Error(sdk::Status::InvalidArgument, "gemm: " + std::string(what));
  }
}

void checkEpilogue(const GemmArgs& g) {
  switch (g.epilogue) {
    case Epilogue::None:
      return;
    case Epilogue::Bias:
    case Epilogue::ReluBias:
      require(g.bias != nullptr, [&] {
        return std::string("epilogue ") + epilogueName(g.epilogue) + " without a bias vector";
      });
      return;
    case Epilogue::BiasGrad:
      require(g.bias_grad != nullptr, "epilogue bias_grad without a bias_grad vector");
      require(g.trans_b == Transpose::No, "epilogue bias_grad needs trans_b = No");
      return;
  }
}

}  // namespace

Precision parsePrecision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "tf32") return Precision::Tf32;
  if (name == "bf16") return Precision::Bf16;
  throw sdk::Error(sdk::Status::InvalidArgument,
                   "unknown precision '" + name + "' (fp32, tf32, bf16)");
}

const char* precisionName(Precision precision) {
  switch (precision) {
    case Precision::Fp32:
      return "fp32";
    case Precision::Tf32:
      return "tf32";
    case Precision::Bf16:
      return "bf16";
  }
  return "unknown";
}

const char* epilogueName(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::None:
      return "none";
    case Epilogue::Bias:
      return "bias";
    case Epilogue::ReluBias:
      return "relu_bias";
    case Epilogue::BiasGrad:
      return "bias_grad";
  }
  return "unknown";
}

void applyEpilogue(const Device& device, const GemmArgs& g) {
  switch (g.epilogue) {
    case Epilogue::None:
      return;
    case Epilogue::Bias:
    case Epilogue::ReluBias:
      return addBias(device, g.c, g.m, g.n, g.ldc, g.bias, g.epilogue == Epilogue::ReluBias);
    case Epilogue::BiasGrad:
      return columnSum(device, g.b, g.k, g.n, g.ldb, 1.0f, nullptr, g.bias_grad);
  }
}

void gemm(const Device& device, const GemmArgs& g) {
  require(g.m >= 0 && g.n >= 0 && g.k >= 0, [&] {
    return "negative size m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
           " k=" + std::to_string(g.k);
  });
  const int64_t a_cols = g.trans_a == Transpose::No ? g.k : g.m;
  const int64_t b_cols = g.trans_b == Transpose::No ? g.n : g.k;
  require(g.lda >= std::max<int64_t>(1, a_cols), [&] {
    return "lda " + std::to_string(g.lda) + " is smaller than A's row of " + std::to_string(a_cols);
  });
  require(g.ldb >= std::max<int64_t>(1, b_cols), [&] {
    return "ldb " + std::to_string(g.ldb) + " is smaller than B's row of " + std::to_string(b_cols);
  });
  require(g.ldc >= std::max<int64_t>(1, g.n), [&] {
    return "ldc " + std::to_string(g.ldc) + " is smaller than C's row of " + std::to_string(g.n);
  });
  checkEpilogue(g);
  if (g.n == 0) return;
  if (g.m == 0) {  // no rows: a bias gradient still has its n (zero) sums
    if (g.epilogue == Epilogue::BiasGrad) applyEpilogue(device, g);
    return;
  }
  require(g.c != nullptr && (g.k == 0 || (g.a != nullptr && g.b != nullptr)), "null matrix");
  // cuBLASLt takes C apart from D, and every k but 0.
  if (device.cuda && device.lt && g.k > 0) {
    return static_cast<cuda::LtMatmul*>(device.lt)->run(device.stream, g);
  }
  if (g.c_in && g.c_in != g.c && g.beta != 0.0f) {
    copyMatrix(device, g.c_in, g.ldc, g.c, g.ldc, g.m, g.n);
  }
  if (device.cuda) {
    cuda::gemm(device.blas, g);
  } else {
    host::gemm(g);
  }
  applyEpilogue(device, g);
}

}  // namespace synk::compute
