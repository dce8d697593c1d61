#include "tests/support/conformance_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "tests/support/rank_fixture.h"

namespace synk::test {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::Avg, ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                             ReduceOp::Min};

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

// Inputs of reductions: small integers, so every dtype holds them and every partial result of
// up to 8 ranks exactly (|sum| <= 112, |product| <= 8, both exact even in bfloat16).
double reduceInput(ReduceOp op, DType dtype, int rank, size_t i) {
  const bool is_unsigned = dtype == DType::UInt8;
  switch (op) {
    case ReduceOp::Prod: {
      const size_t k = (i + static_cast<size_t>(rank)) % 3;
      return k == 0 ? 2.0 : (k == 1 && !is_unsigned ? -1.0 : 1.0);
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const double v = static_cast<double>((i * 13 + static_cast<size_t>(rank) * 7) % 97);
      return is_unsigned ? v : v - 48;
    }
    default: {
      const double v = static_cast<double>((i * 7 + static_cast<size_t>(rank) * 3) % 29);
      return is_unsigned ? v : v - 14;
    }
  }
}

double reduced(ReduceOp op, DType dtype, int n_ranks, size_t i) {
  double acc = reduceInput(op, dtype, 0, i);
  for (int r = 1; r < n_ranks; ++r) {
    const double x = reduceInput(op, dtype, r, i);
    switch (op) {
      case ReduceOp::Prod:
        acc *= x;
        break;
      case ReduceOp::Max:
        acc = std::max(acc, x);
        break;
      case ReduceOp::Min:
        acc = std::min(acc, x);
        break;
      default:
        acc += x;
        break;
    }
  }
  return op == ReduceOp::Avg ? acc / n_ranks : acc;
}

// Values of gathers and broadcasts: distinct per rank and position, exact in the dtype.
double partValue(DType dtype, int rank, size_t i) {
  const size_t mod = dtype == DType::UInt8 || dtype == DType::BFloat16 ? 251
                     : dtype == DType::Float16                         ? 2039
                                                                       : 1000003;
  return static_cast<double>((static_cast<size_t>(rank) * 1009 + i * 3) % mod);
}

// avg divides, so it is exact only up to the dtype's rounding (and 1/n's).
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float64:
      return 1e-12;
    case DType::Float16:
      return 2e-3;
    case DType::BFloat16:
      return 1e-2;
    default:
      return 1e-6;
  }
}

// A buffer of device memory (or of C++ heap memory, see ConformanceOptions::outside_heap) that
// the host fills and reads back through the Device.
class TestBuffer {
 public:
  TestBuffer(RankContext& ctx, const ConformanceOptions& options, DType dtype, size_t count)
      : ctx_(ctx),
        dtype_(dtype),
        count_(count),
        bytes_(count * dtypeSize(dtype)),
        outside_(options.outside_heap) {
    if (outside_) {
      // Misaligned on purpose (by one element): staging must not assume the heap's alignment.
      host_.resize(bytes_ + 2 * sizeof(double));
      data_ = host_.data() + dtypeSize(dtype);
    } else {
      data_ = ctx.device().allocate(bytes_);
    }
  }
  ~TestBuffer() {
    if (!outside_) ctx_.device().release(data_);
  }
  TestBuffer(const TestBuffer&) = delete;
  TestBuffer& operator=(const TestBuffer&) = delete;

  void* data() const { return data_; }

  void upload(const std::vector<double>& values) {
    std::vector<std::byte> raw(bytes_);
    const size_t elem = dtypeSize(dtype_);
    for (size_t i = 0; i < count_; ++i)
      host::storeFromDouble(raw.data() + i * elem, dtype_, values[i]);
    if (outside_) {
      if (bytes_ > 0) std::memcpy(data_, raw.data(), bytes_);
      return;
    }
    ctx_.device().copy(data_, raw.data(), bytes_, CopyKind::HostToDevice);
    Waiter waiter = ctx_.waiter("uploading a test buffer");
    ctx_.device().synchronize(waiter);
  }

  std::vector<double> download() const {
    std::vector<std::byte> raw(bytes_);
    if (outside_) {
      if (bytes_ > 0) std::memcpy(raw.data(), data_, bytes_);
    } else {
      ctx_.device().copy(raw.data(), data_, bytes_, CopyKind::DeviceToHost);
      Waiter waiter = ctx_.waiter("downloading a test buffer");
      ctx_.device().synchronize(waiter);
    }
    std::vector<double> values(count_);
    const size_t elem = dtypeSize(dtype_);
    for (size_t i = 0; i < count_; ++i)
      values[i] = host::loadAsDouble(raw.data() + i * elem, dtype_);
    return values;
  }

 private:
  RankContext& ctx_;
  DType dtype_;
  size_t count_;
  size_t bytes_;
  bool outside_;
  std::vector<std::byte> host_;
  void* data_ = nullptr;
};

std::vector<double> generate(size_t count, const std::function<double(size_t)>& value) {
  std::vector<double> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = value(i);
  return out;
}

// Throws naming the case, the rank and the first wrong element.
void expectValues(const std::string& what, RankContext& ctx, const std::vector<double>& got,
                  size_t count, const std::function<double(size_t)>& expected, double tol = 0) {
  if (got.size() != count) fail(str(what, " on rank ", ctx.rank(), ": ", got.size(), " values"));
  for (size_t i = 0; i < count; ++i) {
    const double want = expected(i);
    const bool ok = tol == 0 ? got[i] == want
                             : std::fabs(got[i] - want) <= tol * std::max(1.0, std::fabs(want));
    if (!ok) {
      fail(str(what, " on rank ", ctx.rank(), ": element ", i, " is ", got[i], ", expected ", want,
               tol == 0 ? "" : str(" (tolerance ", tol, ")")));
    }
  }
}

std::string caseName(const char* collective, DType dtype, size_t count) {
  return str(collective, " ", dtypeName(dtype), " count ", count);
}

bool validOp(ReduceOp op, DType dtype) {
  return op != ReduceOp::Avg || isFloating(dtype);
}

// Per-rank counts of a gather around `base`: uneven, every third rank (from rank 1) sends nothing.
std::vector<size_t> gatherCounts(size_t base, int n_ranks) {
  std::vector<size_t> counts(n_ranks);
  for (int r = 0; r < n_ranks; ++r)
    counts[r] = r % 3 == 1 ? 0 : base + 5 * static_cast<size_t>(r);
  return counts;
}

std::vector<std::vector<size_t>> gatherCases(const ConformanceOptions& options, int n_ranks) {
  std::vector<std::vector<size_t>> cases = {std::vector<size_t>(n_ranks, 0)};
  for (size_t base : options.counts)
    cases.push_back(gatherCounts(base, n_ranks));
  return cases;
}

size_t offsetOf(const std::vector<size_t>& counts, int rank) {
  size_t offset = 0;
  for (int r = 0; r < rank; ++r)
    offset += counts[r];
  return offset;
}

// The rank and index within that rank's part of element i of a gather result.
std::pair<int, size_t> ownerOf(const std::vector<size_t>& counts, size_t i) {
  int r = 0;
  while (i >= counts[r])
    i -= counts[r++];
  return {r, i};
}

void runAllReduce(RankContext& ctx, Communicator& comm, const ConformanceOptions& options,
                  DType dtype, ReduceOp op, size_t count, bool in_place) {
  const std::string what = str(caseName("allReduce", dtype, count), " op ", reduceOpName(op),
                               in_place ? "" : " out of place");
  auto input = [&](size_t i) { return reduceInput(op, dtype, ctx.rank(), i); };
  TestBuffer buffer(ctx, options, dtype, count);
  std::unique_ptr<TestBuffer> send;
  if (in_place) {
    buffer.upload(generate(count, input));
  } else {
    send = std::make_unique<TestBuffer>(ctx, options, dtype, count);
    send->upload(generate(count, input));
    buffer.upload(generate(count, [](size_t) { return 99.0; }));  // must all be overwritten
  }
  Waiter waiter = ctx.waiter(what);
  AllReduceArgs args{buffer.data(), count, dtype, op};
  if (send) args.send = send->data();
  comm.allReduce(args, waiter);
  expectValues(
      what, ctx, buffer.download(), count,
      [&](size_t i) { return reduced(op, dtype, ctx.size(), i); },
      op == ReduceOp::Avg ? tolerance(dtype) : 0);
  if (send) expectValues(what + ": send buffer", ctx, send->download(), count, input);
}

// One allReduceList over `entries` (dtype, op, count each); entry k's inputs are shifted by k so
// that a buffer reduced into the wrong place shows.
struct ListEntry {
  DType dtype;
  ReduceOp op;
  size_t count;
};

void runAllReduceList(RankContext& ctx, Communicator& comm, const ConformanceOptions& options,
                      const std::vector<ListEntry>& entries) {
  const std::string what = str("allReduceList of ", entries.size());
  std::vector<std::unique_ptr<TestBuffer>> buffers;
  std::vector<AllReduceArgs> list;
  for (size_t k = 0; k < entries.size(); ++k) {
    const ListEntry& e = entries[k];
    buffers.push_back(std::make_unique<TestBuffer>(ctx, options, e.dtype, e.count));
    buffers.back()->upload(
        generate(e.count, [&](size_t i) { return reduceInput(e.op, e.dtype, ctx.rank(), i + k); }));
    list.push_back({buffers.back()->data(), e.count, e.dtype, e.op});
  }
  Waiter waiter = ctx.waiter(what);
  comm.allReduceList(list, waiter);
  for (size_t k = 0; k < entries.size(); ++k) {
    const ListEntry& e = entries[k];
    expectValues(
        str(what, ": ", caseName("buffer", e.dtype, e.count), " #", k, " op ", reduceOpName(e.op)),
        ctx, buffers[k]->download(), e.count,
        [&](size_t i) { return reduced(e.op, e.dtype, ctx.size(), i + k); },
        e.op == ReduceOp::Avg ? tolerance(e.dtype) : 0);
  }
}

void runReduce(RankContext& ctx, Communicator& comm, const ConformanceOptions& options, DType dtype,
               ReduceOp op, size_t count, int root, bool in_place) {
  const std::string what = str(caseName("reduce", dtype, count), " op ", reduceOpName(op), " root ",
                               root, in_place ? " in place" : "");
  const bool is_root = ctx.rank() == root;
  auto input = [&](size_t i) { return reduceInput(op, dtype, ctx.rank(), i); };
  TestBuffer send(ctx, options, dtype, count);
  send.upload(generate(count, input));
  std::unique_ptr<TestBuffer> recv;
  if (is_root && !in_place) recv = std::make_unique<TestBuffer>(ctx, options, dtype, count);
  void* recv_data = is_root ? (in_place ? send.data() : recv->data()) : nullptr;
  Waiter waiter = ctx.waiter(what);
  comm.reduce({send.data(), recv_data, count, dtype, op, root}, waiter);
  auto result = [&](size_t i) { return reduced(op, dtype, ctx.size(), i); };
  const double tol = op == ReduceOp::Avg ? tolerance(dtype) : 0;
  if (is_root)
    expectValues(what + ": result", ctx, (in_place ? send : *recv).download(), count, result, tol);
  if (!(is_root && in_place))
    expectValues(what + ": send buffer", ctx, send.download(), count, input);
}

void runBroadcast(RankContext& ctx, Communicator& comm, const ConformanceOptions& options,
                  DType dtype, size_t count, int root, bool in_place) {
  const std::string what =
      str(caseName("broadcast", dtype, count), " root ", root, in_place ? "" : " out of place");
  auto input = [&](size_t i) { return partValue(dtype, ctx.rank(), i); };
  TestBuffer buffer(ctx, options, dtype, count);
  buffer.upload(generate(count, input));
  // Out of place every rank has a send buffer (only the root's is sent), holding values no
  // rank's buffer holds (rank + 100), so a buffer left alone shows.
  auto sent = [&](int rank, size_t i) { return partValue(dtype, rank + 100, i); };
  std::unique_ptr<TestBuffer> send;
  if (!in_place) {
    send = std::make_unique<TestBuffer>(ctx, options, dtype, count);
    send->upload(generate(count, [&](size_t i) { return sent(ctx.rank(), i); }));
  }
  Waiter waiter = ctx.waiter(what);
  BroadcastArgs args{buffer.data(), count, dtype, root};
  if (send) args.send = send->data();
  comm.broadcast(args, waiter);
  expectValues(what, ctx, buffer.download(), count,
               [&](size_t i) { return in_place ? partValue(dtype, root, i) : sent(root, i); });
  if (send) {
    expectValues(what + ": send buffer", ctx, send->download(), count,
                 [&](size_t i) { return sent(ctx.rank(), i); });
  }
}

void runGather(RankContext& ctx, Communicator& comm, const ConformanceOptions& options, DType dtype,
               const std::vector<size_t>& counts, int root) {
  const size_t total = offsetOf(counts, ctx.size());
  const std::string what = str(caseName("gather", dtype, total), " root ", root);
  const size_t mine = counts[ctx.rank()];
  auto input = [&](size_t i) { return partValue(dtype, ctx.rank(), i); };
  TestBuffer send(ctx, options, dtype, mine);
  send.upload(generate(mine, input));
  std::unique_ptr<TestBuffer> recv;
  if (ctx.rank() == root) recv = std::make_unique<TestBuffer>(ctx, options, dtype, total);
  Waiter waiter = ctx.waiter(what);
  comm.gather({send.data(), recv ? recv->data() : nullptr, counts, dtype, root}, waiter);
  if (recv) {
    expectValues(what, ctx, recv->download(), total, [&](size_t i) {
      const auto [r, j] = ownerOf(counts, i);
      return partValue(dtype, r, j);
    });
  }
  expectValues(what + ": send buffer", ctx, send.download(), mine, input);
}

void runAllGather(RankContext& ctx, Communicator& comm, const ConformanceOptions& options,
                  DType dtype, const std::vector<size_t>& counts) {
  const size_t total = offsetOf(counts, ctx.size());
  const std::string what = caseName("allGather", dtype, total);
  const size_t mine = counts[ctx.rank()];
  auto input = [&](size_t i) { return partValue(dtype, ctx.rank(), i); };
  TestBuffer send(ctx, options, dtype, mine);
  send.upload(generate(mine, input));
  TestBuffer recv(ctx, options, dtype, total);
  Waiter waiter = ctx.waiter(what);
  comm.allGather({send.data(), recv.data(), counts, dtype}, waiter);
  expectValues(what, ctx, recv.download(), total, [&](size_t i) {
    const auto [r, j] = ownerOf(counts, i);
    return partValue(dtype, r, j);
  });
  expectValues(what + ": send buffer", ctx, send.download(), mine, input);
}

void expectInvalid(RankContext& ctx, const std::string& what, const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidArgument&) {
    return;
  } catch (const std::exception& e) {
    fail(str(what, " on rank ", ctx.rank(), ": expected InvalidArgument, got: ", e.what()));
  }
  fail(str(what, " on rank ", ctx.rank(), ": expected InvalidArgument, nothing was thrown"));
}

RankOptions rankOptions(const ConformanceOptions& options) {
  RankOptions rank_options;
  rank_options.devices = options.devices;
  return rank_options;
}

}  // namespace

void checkAllReduce(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        for (DType dtype : options.dtypes) {
          for (ReduceOp op : kOps) {
            if (!validOp(op, dtype)) continue;
            for (size_t c = 0; c < options.counts.size(); ++c) {
              // Alternating keeps the run short and still gives every op and count both forms.
              const bool in_place = (c + static_cast<size_t>(op)) % 2 == 0;
              runAllReduce(ctx, comm, options, dtype, op, options.counts[c], in_place);
            }
          }
        }
      },
      rankOptions(options));
}

void checkAllReduceList(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        // Every dtype, op and count in one list (small and large buffers, zero counts among them).
        std::vector<ListEntry> mixed;
        for (DType dtype : options.dtypes) {
          for (ReduceOp op : kOps) {
            if (!validOp(op, dtype)) continue;
            const size_t count = options.counts[mixed.size() % options.counts.size()];
            mixed.push_back({dtype, op, count});
          }
        }
        runAllReduceList(ctx, comm, options, mixed);
        // Many small variables, the case the list exists for; then lists of one and of nothing.
        runAllReduceList(
            ctx, comm, options,
            std::vector<ListEntry>(options.list_length, {DType::Float32, ReduceOp::Sum, 4}));
        runAllReduceList(ctx, comm, options, {{DType::Float64, ReduceOp::Max, 17}});
        runAllReduceList(ctx, comm, options, {{DType::Float32, ReduceOp::Sum, 0}});
        runAllReduceList(ctx, comm, options, {});
      },
      rankOptions(options));
}

void checkReduce(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        for (DType dtype : options.dtypes) {
          for (ReduceOp op : kOps) {
            if (!validOp(op, dtype)) continue;
            for (size_t c = 0; c < options.counts.size(); ++c) {
              for (int root = 0; root < ctx.size(); ++root) {
                // Alternating keeps the run short and still gives every root and count both forms.
                const bool in_place = (c + static_cast<size_t>(root)) % 2 == 1;
                runReduce(ctx, comm, options, dtype, op, options.counts[c], root, in_place);
              }
            }
          }
        }
      },
      rankOptions(options));
}

void checkBroadcast(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        for (DType dtype : options.dtypes) {
          for (size_t c = 0; c < options.counts.size(); ++c) {
            for (int root = 0; root < ctx.size(); ++root) {
              const bool in_place = (c + static_cast<size_t>(root)) % 2 == 0;
              runBroadcast(ctx, comm, options, dtype, options.counts[c], root, in_place);
            }
          }
        }
      },
      rankOptions(options));
}

void checkGather(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        for (DType dtype : options.dtypes) {
          for (const auto& counts : gatherCases(options, ctx.size())) {
            for (int root = 0; root < ctx.size(); ++root) {
              runGather(ctx, comm, options, dtype, counts, root);
            }
          }
        }
      },
      rankOptions(options));
}

void checkAllGather(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        for (DType dtype : options.dtypes) {
          for (const auto& counts : gatherCases(options, ctx.size())) {
            runAllGather(ctx, comm, options, dtype, counts);
          }
        }
      },
      rankOptions(options));
}

void checkInvalidArguments(BackendFactory& factory, int n_ranks,
                           const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        const int n = ctx.size();
        TestBuffer buffer(ctx, options, DType::Float32, 64);
        TestBuffer ints(ctx, options, DType::Int32, 64);
        void* p = buffer.data();
        Waiter waiter = ctx.waiter("invalid arguments");
        expectInvalid(ctx, "allReduce op gather", [&] {
          comm.allReduce({p, 64, DType::Float32, ReduceOp::Gather}, waiter);
        });
        expectInvalid(ctx, "allReduce op none", [&] {
          comm.allReduce({p, 64, DType::Float32, ReduceOp::None}, waiter);
        });
        expectInvalid(ctx, "allReduce avg of int32", [&] {
          comm.allReduce({ints.data(), 64, DType::Int32, ReduceOp::Avg}, waiter);
        });
        expectInvalid(ctx, "allReduceList with avg of int32 second", [&] {
          const AllReduceArgs list[] = {{p, 64, DType::Float32, ReduceOp::Sum},
                                        {ints.data(), 64, DType::Int32, ReduceOp::Avg}};
          comm.allReduceList(list, waiter);
        });
        expectInvalid(ctx, "reduce op none", [&] {
          comm.reduce({p, p, 64, DType::Float32, ReduceOp::None, 0}, waiter);
        });
        expectInvalid(ctx, "reduce root n", [&] {
          comm.reduce({p, p, 64, DType::Float32, ReduceOp::Sum, n}, waiter);
        });
        expectInvalid(ctx, "broadcast root -1", [&] {
          comm.broadcast({p, 64, DType::Float32, -1}, waiter);
        });
        expectInvalid(ctx, "gather with n+1 counts", [&] {
          comm.gather({p, p, std::vector<size_t>(n + 1, 1), DType::Float32, 0}, waiter);
        });
        expectInvalid(ctx, "allGather with n-1 counts", [&] {
          comm.allGather({p, p, std::vector<size_t>(n - 1, 1), DType::Float32}, waiter);
        });
        // Nothing above may have left the ranks out of step.
        runAllReduce(ctx, comm, options, DType::Float32, ReduceOp::Sum, 1000, true);
      },
      rankOptions(options));
}

void checkBackToBack(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  runOnRanks(
      factory, n_ranks,
      [&](RankContext& ctx) {
        Communicator& comm = ctx.backend.communicator(options.native);
        const int n = ctx.size();
        for (int i = 0; i < 100; ++i) {
          const DType dtype = options.dtypes[static_cast<size_t>(i) % options.dtypes.size()];
          const size_t count = static_cast<size_t>(i * 37) % 301;
          const int root = i % n;
          switch (i % 5) {
            case 0:
              runAllReduce(ctx, comm, options, dtype, ReduceOp::Sum, count, i % 2 == 0);
              break;
            case 1:
              runReduce(ctx, comm, options, dtype, ReduceOp::Max, count, root, i % 2 == 0);
              break;
            case 2:
              runBroadcast(ctx, comm, options, dtype, count, root, i % 2 == 1);
              break;
            case 3:
              runGather(ctx, comm, options, dtype, gatherCounts(count, n), root);
              break;
            default:
              runAllGather(ctx, comm, options, dtype, gatherCounts(count, n));
              break;
          }
        }
      },
      rankOptions(options));
}

void checkAllCollectives(BackendFactory& factory, int n_ranks, const ConformanceOptions& options) {
  checkAllReduce(factory, n_ranks, options);
  checkAllReduceList(factory, n_ranks, options);
  checkReduce(factory, n_ranks, options);
  checkBroadcast(factory, n_ranks, options);
  checkGather(factory, n_ranks, options);
  checkAllGather(factory, n_ranks, options);
  checkInvalidArguments(factory, n_ranks, options);
  checkBackToBack(factory, n_ranks, options);
}

}  // namespace synk::test
