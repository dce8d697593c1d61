// The compute library built without CUDA: every CUDA entry point says so. (A cuda rank never
// exists in such a build, but a model must still link.)
#include "synk/plugins/compute/cuda_resources.h"
#include "synk/plugins/compute/gemm.h"
#include "synk/plugins/compute/gemm_lt.h"
#include "synk/plugins/compute/init.h"
#include "synk/plugins/compute/kernels.h"
#include "synk/plugins/compute/update_rules.h"

namespace synk::compute::cuda {
namespace {

[[noreturn]] void unavailable() {
  throw sdk::Error(sdk::Status::Unsupported,
                   "this build of the compute library has no CUDA (synk was configured without "
                   "a CUDA toolkit)");
}

}  // namespace

BlasHandle::BlasHandle(const sdk::Context& context, void*, size_t workspace_bytes)
    : context_(context), workspace_bytes_(workspace_bytes) {
  unavailable();
}
BlasHandle::~BlasHandle() = default;
Stream::Stream() {
  unavailable();
}
Stream::~Stream() = default;
Event::Event() {
  unavailable();
}
Event::~Event() = default;
void Event::record(void*) {
  unavailable();
}
void Event::makeWait(void*) const {
  unavailable();
}
GraphCache::GraphCache(const sdk::Context& context, size_t capacity)
    : context_(context), capacity_(capacity) {}
GraphCache::~GraphCache() = default;
void GraphCache::clear() {}
void GraphCache::run(const std::vector<uint64_t>&, void*, const std::function<void()>& body) {
  body();
}

void gemm(void*, const GemmArgs&) {
  unavailable();
}
struct LtMatmul::Impl {};
LtMatmul::LtMatmul(const sdk::Context&, bool) {
  unavailable();
}
LtMatmul::~LtMatmul() = default;
void LtMatmul::run(void*, const GemmArgs&) {
  unavailable();
}
LtMatmul::Stats LtMatmul::stats() const {
  return {};
}
void fill(void*, float*, int64_t, float) {
  unavailable();
}
void scale(void*, float*, int64_t, float) {
  unavailable();
}
void axpy(void*, int64_t, float, const float*, float*) {
  unavailable();
}
void restoreIfInvalid(void*, const float*, const float*, float*, int64_t) {
  unavailable();
}
void divideBy(void*, float*, const float*, int64_t, const float*) {
  unavailable();
}
void sum(void*, const float*, int64_t, float*, float*) {
  unavailable();
}
void copyMatrix(void*, const float*, int64_t, float*, int64_t, int64_t, int64_t) {
  unavailable();
}
void addBias(void*, float*, int64_t, int64_t, int64_t, const float*, bool) {
  unavailable();
}
void columnSum(void*, const float*, int64_t, int64_t, int64_t, float, const float*, float*) {
  unavailable();
}
void relu(void*, float*, int64_t, int64_t, int64_t) {
  unavailable();
}
void reluBackward(void*, const float*, int64_t, float*, int64_t, int64_t, int64_t) {
  unavailable();
}
void softmaxCrossEntropy(void*, const CrossEntropyArgs&) {
  unavailable();
}
void uniform(void*, float*, int64_t, const InitArgs&) {
  unavailable();
}
void normal(void*, float*, int64_t, const InitArgs&) {
  unavailable();
}
void applyUpdate(void*, Rule, const Hyper&, const UpdateArgs&) {
  unavailable();
}

}  // namespace synk::compute::cuda
