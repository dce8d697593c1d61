#include "synk/harness/run/collective_ops.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "synk/core/device_buffer.h"
#include "synk/core/error.h"
#include "synk/core/memory/heap_buffer.h"
#include "synk/harness/stats/measure.h"

namespace synk::harness {
namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return halfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16ToFloat(v.bits);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
T fromDouble(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{floatToHalf(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{floatToBFloat16(static_cast<float>(v))};
  } else {
    return static_cast<T>(v);
  }
}

// Small integers, exact in every dtype and in every reduction of up to 64 ranks: a product has
// one factor 2 per element, sums stay under 256.
double pattern(ReduceOp op, int rank, size_t i, int ranks) {
  switch (op) {
    case ReduceOp::Prod:
      return i % static_cast<size_t>(ranks) == static_cast<size_t>(rank) ? 2 : 1;
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return double((static_cast<size_t>(rank) + i) % 4);
    default:
      return double((static_cast<size_t>(rank) * 7 + i) % 13);
  }
}

double reduced(ReduceOp op, size_t i, int ranks) {
  double acc = pattern(op, 0, i, ranks);
  for (int r = 1; r < ranks; ++r) {
    const double v = pattern(op, r, i, ranks);
    if (op == ReduceOp::Sum || op == ReduceOp::Avg) acc += v;
    if (op == ReduceOp::Prod) acc *= v;
    if (op == ReduceOp::Max) acc = std::max(acc, v);
    if (op == ReduceOp::Min) acc = std::min(acc, v);
  }
  return op == ReduceOp::Avg ? acc / ranks : acc;
}

// Host staging of one buffer: fill with a pattern, copy in, copy out, compare.
class HostImage {
 public:
  HostImage(DType dtype, size_t count) : dtype_(dtype), bytes_(count * dtypeSize(dtype)) {}
  void set(size_t i, double v) {
    visitDType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      const T value = fromDouble<T>(v);
      std::memcpy(bytes_.data() + i * sizeof(T), &value, sizeof(T));
    });
  }
  double get(size_t i) const {
    return visitDType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      T value;
      std::memcpy(&value, bytes_.data() + i * sizeof(T), sizeof(T));
      return toDouble(value);
    });
  }
  std::byte* data() { return bytes_.data(); }
  size_t bytes() const { return bytes_.size(); }

 private:
  DType dtype_;
  std::vector<std::byte> bytes_;
};

// What an out-of-place result buffer holds before the op: no pattern, sum (at most 3 a rank, 64
// ranks), product, max, min or average gives it, and every dtype holds it exactly.
constexpr double kSentinel = 250;

double tolerance(DType dtype, ReduceOp op) {
  if (op != ReduceOp::Avg) return 0;  // small integers: exact
  if (dtype == DType::Float16) return 1e-3;
  if (dtype == DType::BFloat16) return 1e-2;
  return dtype == DType::Float32 ? 1e-6 : 1e-12;
}

// "all_reduce, broadcast, ...": what synk-bench collectives measures, for a refusal.
std::string benchCollectiveNames() {
  std::string names;
  for (Collective c : benchCollectives())
    names += (names.empty() ? "" : ", ") + toString(c);
  return names;
}

// One rank's buffers and the operation, for one point.
class Bench {
 public:
  Bench(RankSide& side, const CollectiveParams& p)
      : side_(side),
        p_(p),
        device_(side.backend.device()),
        comm_(side.backend.communicator(side.native)),
        rank_(side.group.rank()),
        n_(side.group.size()),
        shape_(collectiveShape(p.op, p.bytes, n_, p.dtype)),
        counts_(static_cast<size_t>(n_), shape_.part) {}

  // Allocations; may throw (out of memory): the caller agrees before any collective.
  void allocate() {
    const size_t e = shape_.element_bytes;
    const bool gathers = p_.op == Collective::Gather || p_.op == Collective::AllGather;
    send_.emplace(device_, (gathers                        ? shape_.part
                            : p_.op == Collective::Scatter ? 0
                                                           : shape_.total) *
                                   e +
                               1);
    const bool separate_recv = p_.op == Collective::Gather || p_.op == Collective::AllGather ||
                               p_.op == Collective::Scatter || !p_.in_place;
    if (separate_recv) {
      const size_t count = p_.op == Collective::Scatter ? shape_.part : shape_.total;
      recv_.emplace(device_, count * e + 1);
    }
    if (p_.op == Collective::Scatter && rank_ == p_.root)
      source_.reserve(side_.heap, shape_.total * e + 1);
  }

  // Published at the agreement barrier: where the root's scatter source lies.
  void publish(std::byte* outbox) const {
    if (p_.op != Collective::Scatter || rank_ != p_.root) return;
    const ShmLocation location = *side_.heap.locate(source_.data());
    std::memcpy(outbox, &location, sizeof location);
  }
  void attach(const std::byte* root_outbox) {
    if (p_.op != Collective::Scatter) return;
    ShmLocation location;
    std::memcpy(&location, root_outbox, sizeof location);
    source_at_ = static_cast<std::byte*>(side_.heap.resolve(location));
  }

  void fill(Waiter& waiter) {
    const ReduceOp op = reductionOp();
    if (p_.op == Collective::Scatter) {
      if (rank_ != p_.root) return;
      HostImage all(p_.dtype, shape_.total);
      for (int r = 0; r < n_; ++r) {
        for (size_t j = 0; j < shape_.part; ++j)
          all.set(static_cast<size_t>(r) * shape_.part + j, pattern(op, r, j, n_));
      }
      std::memcpy(source_.data(), all.data(), all.bytes());
      return;
    }
    const bool gathers = p_.op == Collective::Gather || p_.op == Collective::AllGather;
    HostImage image(p_.dtype, gathers ? shape_.part : shape_.total);
    const bool overwritten = p_.op == Collective::Broadcast && rank_ != p_.root;
    for (size_t i = 0; i < (gathers ? shape_.part : shape_.total); ++i)
      image.set(i, overwritten ? 100 : pattern(op, rank_, i, n_));
    if (image.bytes() > 0) {
      device_.copy(send_->data(), image.data(), image.bytes(), CopyKind::HostToDevice);
      device_.synchronize(waiter);
    }
    // Out of place the result buffer starts as a value no result has, so an op that leaves it
    // alone counts as wrong even after an earlier check filled it correctly.
    if (recv_ && (p_.op == Collective::AllReduce || p_.op == Collective::Broadcast ||
                  p_.op == Collective::Reduce)) {
      HostImage sentinel(p_.dtype, shape_.total);
      for (size_t i = 0; i < shape_.total; ++i)
        sentinel.set(i, kSentinel);
      if (sentinel.bytes() > 0) {
        device_.copy(recv_->data(), sentinel.data(), sentinel.bytes(), CopyKind::HostToDevice);
        device_.synchronize(waiter);
      }
    }
  }

  // An op without a case here (reduce_scatter, which synk-bench collectives does not offer, or
  // a value no op has) is refused naming it, never measured as another op; every rank refuses
  // alike before any communication, so the group stays in step for the next point.
  void run(Waiter& waiter) {
    const ReduceOp op = p_.redop;
    switch (p_.op) {
      case Collective::AllReduce: {
        AllReduceArgs args{recvOrSend(), shape_.total, p_.dtype, op};
        if (!p_.in_place) args.send = send_->data();
        comm_.allReduce(args, waiter);
        return;
      }
      case Collective::Broadcast: {
        BroadcastArgs args{recvOrSend(), shape_.total, p_.dtype, p_.root};
        if (!p_.in_place) args.send = send_->data();
        comm_.broadcast(args, waiter);
        return;
      }
      case Collective::Reduce: {
        ReduceArgs args{send_->data(), recvOrSend(), shape_.total, p_.dtype, op, p_.root};
        if (rank_ != p_.root) args.recv = nullptr;
        comm_.reduce(args, waiter);
        return;
      }
      case Collective::Gather: {
        GatherArgs args{send_->data(), rank_ == p_.root ? recv_->data() : nullptr, counts_,
                        p_.dtype, p_.root};
        comm_.gather(args, waiter);
        return;
      }
      case Collective::AllGather:
        comm_.allGather({send_->data(), recv_->data(), counts_, p_.dtype}, waiter);
        return;
      case Collective::Scatter: {  // each rank copies its part of the root's shared source
        const size_t bytes = shape_.part * shape_.element_bytes;
        if (bytes > 0) {
          device_.copy(recv_->data(), source_at_ + static_cast<size_t>(rank_) * bytes, bytes,
                       CopyKind::HostToDevice);
          device_.synchronize(waiter);
        }
        side_.group.barrier().arrive(waiter, BarrierSite::CollectiveOut);
        return;
      }
      case Collective::ReduceScatter:
        break;
    }
    throw InvalidArgument("synk-bench collectives cannot measure " + toString(p_.op) +
                          ": it measures " + benchCollectiveNames());
  }

  void finish(Waiter& waiter) {
    if (!device_.isHost()) device_.synchronize(waiter);
  }

  // Wrong elements in this rank's result.
  int64_t check(Waiter& waiter) {
    const bool root_only = p_.op == Collective::Reduce || p_.op == Collective::Gather;
    if (root_only && rank_ != p_.root) return 0;
    const bool whole = p_.op != Collective::Scatter;
    HostImage image(p_.dtype, whole ? shape_.total : shape_.part);
    if (image.bytes() > 0) {
      const void* result = recvOrSend();
      device_.copy(image.data(), result, image.bytes(), CopyKind::DeviceToHost);
      device_.synchronize(waiter);
    }
    const ReduceOp op = reductionOp();
    const double tol = tolerance(p_.dtype, p_.redop);
    int64_t wrong = 0;
    const size_t count = image.bytes() / shape_.element_bytes;
    for (size_t i = 0; i < count; ++i) {
      double expected;
      if (p_.op == Collective::AllReduce || p_.op == Collective::Reduce) {
        expected = reduced(op, i, n_);
      } else if (p_.op == Collective::Broadcast) {
        expected = pattern(op, p_.root, i, n_);
      } else if (p_.op == Collective::Scatter) {
        expected = pattern(op, rank_, i, n_);
      } else {
        expected = pattern(op, static_cast<int>(i / shape_.part), i % shape_.part, n_);
      }
      if (std::abs(image.get(i) - expected) > tol * std::max(1.0, std::abs(expected))) ++wrong;
    }
    return wrong;
  }

 private:
  ReduceOp reductionOp() const {
    return p_.op == Collective::AllReduce || p_.op == Collective::Reduce ? p_.redop : ReduceOp::Max;
  }
  void* recvOrSend() const { return recv_ ? recv_->data() : send_->data(); }

  RankSide& side_;
  const CollectiveParams& p_;
  Device& device_;
  Communicator& comm_;
  int rank_, n_;
  CollectiveShape shape_;
  std::vector<size_t> counts_;  // every rank's part (gather, all_gather): not built in the loop
  std::optional<DeviceBuffer> send_, recv_;
  HeapBuffer source_;
  std::byte* source_at_ = nullptr;
};

}  // namespace

int timesPerRank(const CollectiveParams& params) {
  return params.back_to_back ? 1 : params.iterations;
}

namespace {

// Every rank's buffers allocated; false on every rank when some rank could not (this rank's
// reason in `failure`).
bool allocateAll(RankSide& side, Bench& bench, const CollectiveParams& p, Waiter& waiter,
                 std::string& failure) {
  Barrier& barrier = side.group.barrier();
  bool ok = true;
  try {
    bench.allocate();
    bench.publish(barrier.outbox(sizeof(ShmLocation)));
  } catch (const std::exception& e) {
    failure = e.what();
    ok = false;
  }
  if (!barrier.arrive(waiter, BarrierSite::Agree, ok)) return false;
  if (p.op == Collective::Scatter) bench.attach(barrier.exchangeOf(p.root));
  return true;
}

}  // namespace

void warmCollective(RankSide& side, const CollectiveParams& p) {
  Waiter waiter = side.group.commandWaiter("warming up collective " + toString(p.op));
  Bench bench(side, p);
  std::string failure;  // buffers that do not fit: the point's measurement says so
  if (!allocateAll(side, bench, p, waiter, failure)) return;
  // Not filled: the values do not matter to a warm-up (nccl-tests does not set them either), and
  // a fill costs seconds over a sweep to 1 GiB.
  side.group.barrier().arrive(waiter, BarrierSite::CommandStart);
  for (int i = 0; i < p.warmup; ++i)
    bench.run(waiter);
  bench.finish(waiter);
}

bool measureCollective(RankSide& side, const CollectiveParams& p, int64_t* times, int64_t& wrong,
                       std::string& failure, std::vector<GpuReading>* gpus) {
  Barrier& barrier = side.group.barrier();
  Waiter waiter = side.group.commandWaiter("collective " + toString(p.op));
  Bench bench(side, p);
  if (!allocateAll(side, bench, p, waiter, failure)) return false;
  bench.fill(waiter);
  // The telemetry's start before the warm-up, not between it and the timer: NVML's reads take
  // 5-50 ms, and GPUs left idle that long ran the first timed calls slow — a fixed 60-100 us a
  // batch, 4 us an op at nccl-tests' 20 iterations (results/device/
  // 2026-11-26-h200x2-nccl-small-size-probe.md). Its window holds the warm-up too (the same op).
  GpuTelemetry::Mark mark;
  if (side.telemetry) mark = side.telemetry->mark();  // the others wait at the barrier
  barrier.arrive(waiter, BarrierSite::CommandStart);
  for (int i = 0; i < p.warmup; ++i)
    bench.run(waiter);
  bench.finish(waiter);
  barrier.arrive(waiter, BarrierSite::CommandStart);
  // While the master read the telemetry the others slept on the barrier's futex, and a woken
  // rank starts tens of microseconds after the master: a rank's clock would then include its
  // peer's wake-up, up to several microseconds an iteration over nccl-tests' 20 back-to-back
  // calls. Every rank now spins, so a second arrival releases them together, as nccl-tests'
  // barrier before its timer does.
  barrier.arrive(waiter, BarrierSite::CommandStart);
  if (p.back_to_back) {
    // nccl-tests' BenchTime: the calls are issued back to back (a cuda rank enqueues them on its
    // stream; a cpu op is complete when it returns) and the device is synchronised once.
    const auto start = Clock::now();
    for (int i = 0; i < p.iterations; ++i) {
      if (p.blocking) barrier.arrive(waiter, BarrierSite::CommandStart);
      bench.run(waiter);
      if (p.blocking) bench.finish(waiter);
    }
    bench.finish(waiter);
    const auto total = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    times[0] = std::llround(total / std::max(1, p.iterations));
  } else {
    for (int i = 0; i < p.iterations; ++i) {
      if (p.blocking) barrier.arrive(waiter, BarrierSite::CommandStart);
      const auto start = Clock::now();
      bench.run(waiter);
      bench.finish(waiter);
      times[i] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    }
  }
  if (side.telemetry && gpus) *gpus = side.telemetry->since(mark);
  wrong = 0;
  for (int c = 0; c < p.checks; ++c) {
    barrier.arrive(waiter, BarrierSite::CommandStart);  // nobody still reads the last results
    bench.fill(waiter);
    barrier.arrive(waiter, BarrierSite::CommandStart);  // every input is in place
    bench.run(waiter);
    bench.finish(waiter);
    wrong += bench.check(waiter);
  }
  return true;
}

}  // namespace synk::harness
