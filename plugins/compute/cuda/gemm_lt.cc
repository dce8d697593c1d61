// LtMatmul (gemm_lt.h): plans keyed by the whole problem, cuBLASLt's heuristic, optional timing.
#include "synk/plugins/compute/gemm_lt.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "synk/plugins/compute/cuda/cuda_blas_types.h"
#include "synk/plugins/compute/cuda/cuda_check.h"

namespace synk::compute::cuda {
namespace {

constexpr int kTimedRuns = 5;  // per candidate, after one untimed run
constexpr auto kTuningDeadline = std::chrono::seconds(60);

void checkLt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what, cublasLtGetStatusString(status));
}

void checkCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail(what, cudaGetErrorString(status));
}

// The alignment the heuristic is told: the largest power of two dividing the address, up to 16
// bytes. Its default assumption is 256, which a row range of a batch need not meet; 16 is what
// vector loads and Hopper's TMA need. Capping it keeps the choice (and so the rounding) the same
// for the same data wherever it sits: a staged copy and a device-resident batch give equal bits.
int64_t alignmentOf(const void* pointer, int64_t cap = 16) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  int64_t alignment = cap;
  while (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0)
    alignment /= 2;
  return alignment;
}

cublasLtEpilogue_t fusedEpilogue(const GemmArgs& g) {
  switch (g.epilogue) {
    case Epilogue::None:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::Bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::ReluBias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::BiasGrad:
      // BGRADA: the sums of the column-major A (our B) over k. Whether cuBLASLt scales them by
      // alpha is not documented, so only an unscaled product fuses them.
      return g.alpha == 1.0f ? CUBLASLT_EPILOGUE_BGRADA : CUBLASLT_EPILOGUE_DEFAULT;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool usesBiasPointer(cublasLtEpilogue_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_BGRADA;
}

const void* biasPointer(const GemmArgs& g) {
  return g.epilogue == Epilogue::BiasGrad ? static_cast<const void*>(g.bias_grad) : g.bias;
}

// C when it is read: c_in, else D itself.
const float* cInput(const GemmArgs& g) {
  return g.c_in && g.beta != 0.0f ? g.c_in : g.c;
}

using Key = std::array<int64_t, 16>;

Key keyOf(const GemmArgs& g, cublasLtEpilogue_t epilogue) {
  return {g.m, g.n, g.k, static_cast<int64_t>(g.trans_a), static_cast<int64_t>(g.trans_b), g.lda,
          g.ldb, g.ldc, static_cast<int64_t>(g.precision), static_cast<int64_t>(epilogue),
          g.beta != 0.0f ? 1 : 0, alignmentOf(g.a), alignmentOf(g.b), alignmentOf(cInput(g)),
          alignmentOf(g.c),
          // The heuristic reads the bias pointer itself (no cap to tell it): key on all of it.
          usesBiasPointer(epilogue) ? alignmentOf(biasPointer(g), 256) : 0};
}

std::string describe(const GemmArgs& g) {
  return std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k) + ", " +
         precisionName(g.precision) + ", epilogue " + epilogueName(g.epilogue);
}

// One problem's descriptors and algorithm. Column-major view: A_cm = our B, B_cm = our A, D_cm =
// our C transposed (n x m).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool fused = false;                      // the requested epilogue runs inside the GEMM
  cublasLtMatmulHeuristicResult_t algo{};  // the algorithm and the workspace it needs

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
  }

  void setEpilogue(cublasLtEpilogue_t value) {
    epilogue = value;
    checkLt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue),
            "cublasLtMatmulDescSetAttribute (epilogue)");
  }
  void setBias(const void* pointer) {
    if (!usesBiasPointer(epilogue)) return;
    checkLt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pointer,
                                           sizeof pointer),
            "cublasLtMatmulDescSetAttribute (bias pointer)");
  }
};

class Preference {
 public:
  Preference(const GemmArgs& g, size_t workspace) {
    checkLt(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const uint64_t bytes = workspace;
    set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes);
    const uint32_t align_a = static_cast<uint32_t>(alignmentOf(g.b));  // A_cm = our B
    const uint32_t align_b = static_cast<uint32_t>(alignmentOf(g.a));
    const uint32_t align_c = static_cast<uint32_t>(alignmentOf(cInput(g)));
    const uint32_t align_d = static_cast<uint32_t>(alignmentOf(g.c));
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof align_a);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof align_b);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c);
    set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d, sizeof align_d);
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(pref_); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
  cublasLtMatmulPreference_t get() const { return pref_; }

 private:
  void set(cublasLtMatmulPreferenceAttributes_t attribute, const void* value, size_t bytes) {
    checkLt(cublasLtMatmulPreferenceSetAttribute(pref_, attribute, value, bytes),
            "cublasLtMatmulPreferenceSetAttribute");
  }
  cublasLtMatmulPreference_t pref_ = nullptr;
};

cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t out = nullptr;
  checkLt(cublasLtMatrixLayoutCreate(&out, CUDA_R_32F, rows, cols, ld),
          "cublasLtMatrixLayoutCreate");
  return out;
}

class TimingEvent {
 public:
  TimingEvent() { checkCuda(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~TimingEvent() { cudaEventDestroy(event_); }
  TimingEvent(const TimingEvent&) = delete;
  TimingEvent& operator=(const TimingEvent&) = delete;
  cudaEvent_t get() const { return event_; }
  // Polls (a host wait with a deadline, never blocking inside CUDA).
  void wait() const {
    const auto deadline = std::chrono::steady_clock::now() + kTuningDeadline;
    for (;;) {
      const cudaError_t state = cudaEventQuery(event_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady)
        fail("cuBLASLt autotuning (cudaEventQuery)", cudaGetErrorString(state));
      if (std::chrono::steady_clock::now() > deadline) {
        fail("cuBLASLt autotuning", "the GPU did not finish the timed GEMMs within 60 s");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

struct LtMatmul::Impl {
  sdk::Context context;
  bool tune;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<Key, std::unique_ptr<Plan>> plans;
  Stats stats;

  Impl(const sdk::Context& c, bool t) : context(c), tune(t) {}

  cublasStatus_t launch(const Plan& plan, const cublasLtMatmulHeuristicResult_t& algo,
                        const GemmArgs& g, float* d, cudaStream_t stream) const {
    const float* c = g.beta != 0.0f ? cInput(g) : d;
    return cublasLtMatmul(handle, plan.desc, &g.alpha, g.b, plan.a, g.a, plan.b, &g.beta, c, plan.c,
                          d, plan.c, &algo.algo, workspace, algo.workspaceSize, stream);
  }

  std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Plan& plan, const GemmArgs& g,
                                                          int wanted) const {
    Preference pref(g, kWorkspaceBytes);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(wanted));
    int found = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, plan.a, plan.b, plan.c, plan.c,
                                       pref.get(), wanted, results.data(), &found);
    if (status != CUBLAS_STATUS_SUCCESS) found = 0;  // NOT_SUPPORTED: nothing for this epilogue
    results.resize(static_cast<size_t>(found));
    return results;
  }

  std::unique_ptr<Plan> makePlan(cudaStream_t stream, const GemmArgs& g,
                                 cublasLtEpilogue_t wanted) {
    auto plan = std::make_unique<Plan>();
    checkLt(cublasLtMatmulDescCreate(&plan->desc, computeType(g.precision), CUDA_R_32F),
            "cublasLtMatmulDescCreate");
    const cublasOperation_t op_a = op(g.trans_b), op_b = op(g.trans_a);
    checkLt(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
        "cublasLtMatmulDescSetAttribute (transa)");
    checkLt(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
        "cublasLtMatmulDescSetAttribute (transb)");
    const auto m = static_cast<uint64_t>(g.m), n = static_cast<uint64_t>(g.n),
               k = static_cast<uint64_t>(g.k);
    plan->a = g.trans_b == Transpose::No ? layout(n, k, g.ldb) : layout(k, n, g.ldb);
    plan->b = g.trans_a == Transpose::No ? layout(k, m, g.lda) : layout(m, k, g.lda);
    plan->c = layout(n, m, g.ldc);
    const int count = tune ? kCandidates : 1;
    plan->setEpilogue(wanted);
    plan->setBias(biasPointer(g));  // its alignment steers the heuristic
    std::vector<cublasLtMatmulHeuristicResult_t> found = candidates(*plan, g, count);
    plan->fused =
        !found.empty() && g.epilogue != Epilogue::None && wanted != CUBLASLT_EPILOGUE_DEFAULT;
    if (found.empty() && wanted != CUBLASLT_EPILOGUE_DEFAULT) {  // a kernel does it after
      const void* none = nullptr;
      checkLt(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &none,
                                             sizeof none),
              "cublasLtMatmulDescSetAttribute (bias pointer)");
      plan->setEpilogue(CUBLASLT_EPILOGUE_DEFAULT);
      found = candidates(*plan, g, count);
    }
    if (found.empty()) {
      fail(("cuBLASLt (" + describe(g) + ")").c_str(), "the heuristic offers no algorithm");
    }
    plan->algo = found[0];
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    checkCuda(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
    if (tune && found.size() > 1 && capturing == cudaStreamCaptureStatusNone) {
      pickFastest(*plan, g, found, stream);
      ++stats.tuned;
    }
    if (!plan->fused && g.epilogue != Epilogue::None) ++stats.fallbacks;
    ++stats.plans;
    return plan;
  }

  // Times every candidate on scratch outputs (the inputs are only read) and keeps the fastest.
  void pickFastest(Plan& plan, const GemmArgs& g,
                   const std::vector<cublasLtMatmulHeuristicResult_t>& found, cudaStream_t stream) {
    const size_t d_bytes = static_cast<size_t>(g.m * g.ldc) * sizeof(float);
    const size_t bias_bytes = static_cast<size_t>(g.n) * sizeof(float);
    auto* d = static_cast<float*>(context.allocate(d_bytes + bias_bytes + 256));
    // The host allocator orders its memory on the rank's stream, which may not be `stream`.
    TimingEvent allocated, start, stop;
    checkCuda(cudaEventRecord(allocated.get(), static_cast<cudaStream_t>(context.stream())),
              "cudaEventRecord");
    checkCuda(cudaStreamWaitEvent(stream, allocated.get(), 0), "cudaStreamWaitEvent");
    if (plan.epilogue == CUBLASLT_EPILOGUE_BGRADA) {
      plan.setBias(reinterpret_cast<std::byte*>(d) + (d_bytes + 255) / 256 * 256);
    }
    float best_ms = -1;
    plan.algo = found[0];
    try {
      for (const cublasLtMatmulHeuristicResult_t& candidate : found) {
        if (launch(plan, candidate, g, d, stream) != CUBLAS_STATUS_SUCCESS) continue;
        checkCuda(cudaEventRecord(start.get(), stream), "cudaEventRecord");
        for (int r = 0; r < kTimedRuns; ++r)
          launch(plan, candidate, g, d, stream);
        checkCuda(cudaEventRecord(stop.get(), stream), "cudaEventRecord");
        stop.wait();
        float ms = 0;
        checkCuda(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
        if (best_ms < 0 || ms < best_ms) {
          best_ms = ms;
          plan.algo = candidate;
        }
      }
    } catch (...) {
      context.release(d);
      throw;
    }
    context.release(d);  // every candidate failing to launch keeps #0: run() then says why
  }
};

LtMatmul::LtMatmul(const sdk::Context& context, bool tune)
    : impl_(std::make_unique<Impl>(context, tune)) {
  checkLt(cublasLtCreate(&impl_->handle), "cublasLtCreate");
  try {
    impl_->workspace = context.allocate(kWorkspaceBytes);
  } catch (...) {
    cublasLtDestroy(impl_->handle);
    throw;
  }
}

LtMatmul::~LtMatmul() {
  impl_->plans.clear();
  cublasLtDestroy(impl_->handle);
  impl_->context.release(impl_->workspace);  // stream-ordered by the host's allocator
}

void LtMatmul::run(void* stream, const GemmArgs& g) {
  const auto s = static_cast<cudaStream_t>(stream);
  const cublasLtEpilogue_t wanted = fusedEpilogue(g);
  const Key key = keyOf(g, wanted);
  auto it = impl_->plans.find(key);
  if (it == impl_->plans.end()) it = impl_->plans.emplace(key, impl_->makePlan(s, g, wanted)).first;
  Plan& plan = *it->second;
  plan.setBias(biasPointer(g));
  const cublasStatus_t status = impl_->launch(plan, plan.algo, g, g.c, s);
  if (status != CUBLAS_STATUS_SUCCESS) {
    fail(("cublasLtMatmul (" + describe(g) + ")").c_str(), cublasLtGetStatusString(status));
  }
  ++impl_->stats.runs;
  if (!plan.fused) applyEpilogue(Device{true, stream, nullptr, nullptr}, g);
}

LtMatmul::Stats LtMatmul::stats() const {
  return impl_->stats;
}

}  // namespace synk::compute::cuda
