#pragma once
// Sums the flat gradient (and the row count stored after it) over the ranks while backward still
// runs: buckets of whole layers, last layer first (the order backward finishes them), each
// all-reduced through the host's service (ABI 1.2) as soon as its last layer is done. A bucket
// closes once it holds bucket_bytes; bucket_bytes = 0 means one all-reduce after backward.
//
// Host device: each all-reduce runs when issued (shared memory), between two layers' GEMMs.
// CUDA: backward runs on the model's compute stream; each bucket records an event there, the
// rank's stream waits for it and gets the NCCL all-reduce, so NCCL works on bucket k while the
// compute stream computes the layers of bucket k + 1. The update then runs on the rank's stream.
// With one rank nothing is reduced (the sum over one rank is itself).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "synk/plugins/compute/cuda_resources.h"
#include "synk/plugins/mlp/mlp_config.h"

namespace synk::mlp {

struct Bucket {
  int last_layer;      // issued once this layer's block is done
  int64_t begin, end;  // float range of the gradient (the count slot is in the first bucket)
};

// The buckets, in the order they are issued.
std::vector<Bucket> planBuckets(const Config& config);

class GradientReducer {
 public:
  // `compute_stream`: where backward runs (CUDA; the rank's stream is context.stream()).
  GradientReducer(const Config& config, const sdk::Context& context, void* compute_stream);

  // Before the pass: the compute stream waits for the rank's stream (inputs written there).
  void begin();
  // After backward wrote layer l's block into `grad`. `reduced(begin, end)`, if given, is called
  // once each bucket's all-reduce is issued, with the bucket's float range (on CUDA its work
  // queued after the all-reduce on the rank's stream runs once the sum is there).
  void layerDone(int l, float* grad,
                 const std::function<void(int64_t, int64_t)>& reduced = nullptr);
  // After the pass: the rank's stream is ordered after everything on the compute stream.
  void join();

 private:
  sdk::Context context_;
  std::vector<Bucket> buckets_;
  size_t next_ = 0;
  bool reduces_;
  bool two_streams_;
  void* compute_stream_;
  std::unique_ptr<compute::cuda::Event> start_;
  std::vector<std::unique_ptr<compute::cuda::Event>> ready_;  // one per bucket, reused per call
  std::unique_ptr<compute::cuda::Event> done_;
};

}  // namespace synk::mlp
