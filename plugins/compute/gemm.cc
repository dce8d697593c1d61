// gemm(): argument checks, then the host kernel or cuBLAS.
#include "plugins/compute/gemm.h"

#include <algorithm>
#include <string>

namespace synk::compute {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw sdk::Error(sdk::Status::InvalidArgument, "gemm: " + what);
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

void gemm(const Device& device, const GemmArgs& g) {
  require(g.m >= 0 && g.n >= 0 && g.k >= 0, "negative size m=" + std::to_string(g.m) + " n=" +
                                                std::to_string(g.n) + " k=" + std::to_string(g.k));
  const int64_t a_cols = g.trans_a == Transpose::No ? g.k : g.m;
  const int64_t b_cols = g.trans_b == Transpose::No ? g.n : g.k;
  require(g.lda >= std::max<int64_t>(1, a_cols),
          "lda " + std::to_string(g.lda) + " is smaller than A's row of " + std::to_string(a_cols));
  require(g.ldb >= std::max<int64_t>(1, b_cols),
          "ldb " + std::to_string(g.ldb) + " is smaller than B's row of " + std::to_string(b_cols));
  require(g.ldc >= std::max<int64_t>(1, g.n),
          "ldc " + std::to_string(g.ldc) + " is smaller than C's row of " + std::to_string(g.n));
  if (g.m == 0 || g.n == 0) return;
  require(g.c != nullptr && (g.k == 0 || (g.a != nullptr && g.b != nullptr)), "null matrix");
  if (device.cuda) {
    cuda::gemm(device.blas, g);
  } else {
    host::gemm(g);
  }
}

}  // namespace synk::compute
