// CUDA runtime and cuBLAS objects of cuda_resources.h.
#include "synk/plugins/compute/cuda_resources.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "synk/plugins/compute/cuda/cuda_check.h"

namespace synk::compute::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail(what, cudaGetErrorString(status));
}

void checkBlas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what, cublasGetStatusString(status));
}

}  // namespace

BlasHandle::BlasHandle(const sdk::Context& context, void* stream, size_t workspace_bytes)
    : context_(context), workspace_bytes_(workspace_bytes) {
  cublasHandle_t handle = nullptr;
  checkBlas(cublasCreate(&handle), "cublasCreate");
  handle_ = handle;
  try {
    workspace_ = context_.allocate(workspace_bytes_);
    checkBlas(cublasSetStream(handle, static_cast<cudaStream_t>(stream)), "cublasSetStream");
    checkBlas(cublasSetWorkspace(handle, workspace_, workspace_bytes_), "cublasSetWorkspace");
  } catch (...) {
    cublasDestroy(handle);
    if (workspace_) context_.release(workspace_);
    throw;
  }
}

BlasHandle::~BlasHandle() {
  cublasDestroy(static_cast<cublasHandle_t>(handle_));
  context_.release(workspace_);  // stream-ordered by the host's allocator
}

Stream::Stream() {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = stream;
}

Stream::~Stream() {
  cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Event::Event() {
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  event_ = event;
}

Event::~Event() {
  cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

void Event::record(void* stream) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)),
        "cudaEventRecord");
}

void Event::makeWait(void* stream) const {
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event_), 0),
        "cudaStreamWaitEvent");
}

GraphCache::GraphCache(const sdk::Context& context, size_t capacity)
    : context_(context), capacity_(capacity) {}

GraphCache::~GraphCache() {
  clear();
}

void GraphCache::clear() {
  for (Entry& entry : entries_) {
    if (entry.exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(entry.exec));
  }
  entries_.clear();
}

void GraphCache::run(const std::vector<uint64_t>& key, void* stream,
                     const std::function<void()>& body) {
  if (!enabled_ || capacity_ == 0) return body();
  auto it = entries_.begin();
  while (it != entries_.end() && it->key != key)
    ++it;
  if (it == entries_.end()) {  // first sighting: run as is, capture next time
    if (entries_.size() >= capacity_) {
      if (entries_.back().exec) {
        cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(entries_.back().exec));
      }
      entries_.pop_back();
    }
    entries_.push_front({key, nullptr});
    return body();
  }
  entries_.splice(entries_.begin(), entries_, it);
  Entry& entry = entries_.front();
  const auto s = static_cast<cudaStream_t>(stream);
  if (!entry.exec) {
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      body();
    } catch (...) {
      cudaStreamEndCapture(s, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    const cudaError_t ended = cudaStreamEndCapture(s, &graph);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = ended == cudaSuccess ? cudaGraphInstantiate(&exec, graph, 0) : ended;
    if (graph) cudaGraphDestroy(graph);
    if (made != cudaSuccess) {
      (void)cudaGetLastError();
      enabled_ = false;
      clear();
      context_.log(sdk::LogLevel::Warning, std::string("CUDA graph capture failed (") +
                                               cudaGetErrorString(made) +
                                               "); running without graphs");
      return body();
    }
    entry.exec = exec;
    ++captures_;
  }
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(entry.exec), s), "cudaGraphLaunch");
  ++launches_;
}

}  // namespace synk::compute::cuda
