#include "synk/plugins/mlp/mlp_reducer.h"

namespace synk::mlp {

int tailChunks(const Config& config, int ranks) {
  const int64_t block_bytes = config.offset(1) * static_cast<int64_t>(sizeof(float));
  const bool large = config.bucket_bytes > 0 && block_bytes >= kTailChunks * config.bucket_bytes;
  return ranks > 1 && large && config.dims[0] >= kTailChunks ? kTailChunks : 1;
}

std::vector<Bucket> planBuckets(const Config& config, int tail_chunks, bool count_slot) {
  std::vector<Bucket> buckets;
  int64_t end = config.parameters() + (count_slot ? 1 : 0);  // the slot rides in the first
  for (int l = config.layers() - 1; l > 0; --l) {
    const int64_t begin = config.offset(l);
    const bool full = config.bucket_bytes > 0 &&
                      (end - begin) * static_cast<int64_t>(sizeof(float)) >= config.bucket_bytes;
    if (full) {
      buckets.push_back({begin, end});
      end = begin;
    }
  }
  for (int c = tail_chunks - 1; c >= 0; --c) {  // the first layer's block, its last rows first
    const int64_t begin = config.offset(0) + config.tailCut(tail_chunks, c) * config.dims[1];
    buckets.push_back({begin, end});
    end = begin;
  }
  return buckets;
}

GradientReducer::GradientReducer(const Config& config, const sdk::Context& context,
                                 void* compute_stream, bool count_slot)
    : context_(context),
      tail_chunks_(mlp::tailChunks(config, context.nRanks())),
      buckets_(planBuckets(config, tail_chunks_, count_slot)),
      reduces_(context.nRanks() > 1),
      two_streams_(context.isCuda() && compute_stream != context.stream()),
      compute_stream_(compute_stream) {
  if (reduces_ && !context.hasAllReduce()) {
    throw sdk::Error(sdk::Status::Unsupported,
                     "the mlp on several ranks needs the host's all_reduce (plugin ABI 1.2); "
                     "this host's ABI is older");
  }
  if (!two_streams_) return;
  start_ = std::make_unique<compute::cuda::Event>();
  scalar_ready_ = std::make_unique<compute::cuda::Event>();
  done_ = std::make_unique<compute::cuda::Event>();
  for (size_t b = 0; b < buckets_.size(); ++b)
    ready_.push_back(std::make_unique<compute::cuda::Event>());
}

void GradientReducer::begin() {
  next_ = 0;
  if (!two_streams_) return;
  start_->record(context_.stream());
  start_->makeWait(compute_stream_);
}

void GradientReducer::written(int64_t from, float* grad,
                              const std::function<void(int64_t, int64_t)>& reduced) {
  if (!reduces_) return;
  while (next_ < buckets_.size() && buckets_[next_].begin >= from) {
    const Bucket& bucket = buckets_[next_];
    if (two_streams_) {
      ready_[next_]->record(compute_stream_);
      ready_[next_]->makeWait(context_.stream());
    }
    context_.allReduce(grad + bucket.begin, static_cast<size_t>(bucket.end - bucket.begin),
                       sdk::DType::Float32, sdk::ReduceOp::Sum);
    if (reduced) reduced(bucket.begin, bucket.end);
    ++next_;
  }
}

void GradientReducer::reduceScalar(float* value) {
  if (!reduces_) return;
  if (two_streams_) {
    scalar_ready_->record(compute_stream_);
    scalar_ready_->makeWait(context_.stream());
  }
  context_.allReduce(value, 1, sdk::DType::Float32, sdk::ReduceOp::Sum);
}

void GradientReducer::join() {
  if (!two_streams_) return;
  done_->record(compute_stream_);
  done_->makeWait(context_.stream());
}

}  // namespace synk::mlp
