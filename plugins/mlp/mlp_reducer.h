#pragma once
// Sums the flat gradient (and the row count stored after it) over the ranks while backward still
// runs: buckets of whole layers, last layer first (the order backward finishes them), each
// all-reduced through the host's service (ABI 1.2) as soon as backward has written it. A bucket
// closes once it holds bucket_bytes; bucket_bytes = 0 means one all-reduce after backward.
// The first layer's block, the last backward writes, is the one whose all-reduce and update
// nothing hides: where it is large (at least kTailChunks buckets) backward writes it in
// kTailChunks GEMMs (row ranges of W, the bias with the last rows), each a bucket, so that only
// the last chunk's all-reduce is left after backward.
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
  int64_t begin, end;  // float range of the gradient (the count slot is in the first bucket)
};

constexpr int kTailChunks = 4;
// How many GEMMs backward writes the first layer's block in (1 or kTailChunks): only with
// several ranks (nothing to hide on one).
int tailChunks(const Config& config, int ranks);

// The buckets, in the order they are issued; `count_slot`: the row count stored after the
// gradient rides in the first (a vector of the parameters alone has none).
std::vector<Bucket> planBuckets(const Config& config, int tail_chunks = 1, bool count_slot = true);

class GradientReducer {
 public:
  // `compute_stream`: where backward runs (CUDA; the rank's stream is context.stream()).
  // `count_slot`: the vector reduced has the row count after the parameters (the gradient);
  // without, it is the parameters alone (the SGD shares of Network::backwardSgdShare).
  GradientReducer(const Config& config, const sdk::Context& context, void* compute_stream,
                  bool count_slot = true);
  int tailChunks() const { return tail_chunks_; }

  // Before the pass: the compute stream waits for the rank's stream (inputs written there).
  void begin();
  // After backward wrote grad[from, parameters()) (Network::backward's `written`): issues every
  // bucket inside it. `reduced(begin, end)`, if given, is called once each bucket's all-reduce
  // is issued, with the bucket's float range (on CUDA its work queued after the all-reduce on
  // the rank's stream runs once the sum is there).
  void written(int64_t from, float* grad,
               const std::function<void(int64_t, int64_t)>& reduced = nullptr);
  // One float written on the compute stream so far (a row count), all-reduced on its own.
  void reduceScalar(float* value);
  // After the pass: the rank's stream is ordered after everything on the compute stream.
  void join();

 private:
  sdk::Context context_;
  int tail_chunks_;
  std::vector<Bucket> buckets_;
  size_t next_ = 0;
  bool reduces_;
  bool two_streams_;
  void* compute_stream_;
  std::unique_ptr<compute::cuda::Event> start_, scalar_ready_;
  std::vector<std::unique_ptr<compute::cuda::Event>> ready_;  // one per bucket, reused per call
  std::unique_ptr<compute::cuda::Event> done_;
};

}  // namespace synk::mlp
