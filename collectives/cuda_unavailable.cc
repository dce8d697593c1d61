// The "cuda" backend of a build without CUDA: listed, so asking for it names the reason instead
// of "unknown backend".
#include "collectives/cuda_factory.h"
#include "core/error.h"

namespace synk {
namespace {

constexpr const char* kWhy =
    "synk was built without CUDA (no nvcc with NCCL and cuBLAS found at configure time)";

class UnavailableCudaFactory final : public BackendFactory {
 public:
  std::string name() const override { return "cuda"; }
  bool isViable(std::string* why) const override {
    if (why) *why = kWhy;
    return false;
  }
  int deviceCount() const override { return 0; }
  std::unique_ptr<Backend> create(RankEnvironment&) override {
    throw UsageError(str("backend 'cuda' is not available: ", kWhy));
  }
};

}  // namespace

std::unique_ptr<BackendFactory> makeCudaBackendFactory() {
  return std::make_unique<UnavailableCudaFactory>();
}

}  // namespace synk
