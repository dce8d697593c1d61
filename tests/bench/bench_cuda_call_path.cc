// The runtime's own path on cuda ranks against raw CUDA and NCCL measured in the same run (the
// nccl_peer model runs the raw programs inside the same session, on the same streams and
// communicator):
//   trivial call       a function with a 2-row scattered input and a scalar avg output (the
//                      model's work: one 4-byte memset) vs the raw floor: the same 16-byte copy
//                      in, memset and 4-byte copy out on one stream, polled until idle
//   all_reduce + wait  Session::allReduce of 4 KiB then Session::synchronize vs raw
//                      ncclAllReduce + cudaStreamSynchronize
//   to the master      Session::reduce, gather and getValue(rank 1) with the result in an Array
//                      vs raw ncclReduce / ncclSend+ncclRecv plus a pinned device-to-host copy
// Medians of --reps repetitions, each the mean of a loop.
//   bench_cuda_call_path [--ranks N] [--reps R] [--to-master 16M,256M | none]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "synk/harness/stats/measure.h"
#include "synk/synk.h"
#include "tests/support/size_args.h"

using namespace synk;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int ranks = 0;
  int reps = 7;
  std::vector<double> to_master = {16 << 20, 256 << 20};
};

using test::parseSizeList;

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--ranks") {
      o.ranks = std::atoi(value.c_str());
    } else if (key == "--reps") {
      o.reps = std::atoi(value.c_str());
    } else if (key == "--to-master") {
      o.to_master = parseSizeList(value);
    } else {
      std::fprintf(stderr, "bench_cuda_call_path: unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return o;
}

template <typename Body>
double secondsPer(int iters, Body&& body) {
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i)
    body();
  return std::chrono::duration<double>(Clock::now() - start).count() / iters;
}

void row(const char* what, const std::string& size, double synk_s, double raw_s) {
  std::printf("%-22s %10s %11.2f %11.2f %+10.2f %8.1f%%\n", what, size.c_str(), synk_s * 1e6,
              raw_s * 1e6, (synk_s - raw_s) * 1e6, 100.0 * raw_s / synk_s);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    Session session = synk::fork({.n_parallel = o.ranks, .backend = "cuda"});
    const int n = session.size();
    Model peer = session.load(pluginPath("synk_nccl_peer"));
    Function noop = session.function(peer, "noop");
    Function floor = session.function(peer, "raw_floor",
                                      {.broadcast = {"iters"}, .outputs = {{"seconds", "max"}}});
    Function raw_allreduce = session.function(
        peer, "raw_allreduce", {.broadcast = {"iters", "mode"}, .outputs = {{"seconds", "max"}}});
    Function raw_to_master = session.function(
        peer, "raw_to_master", {.broadcast = {"kind", "iters"}, .outputs = {{"seconds", "max"}}});
    Variable buf = peer.variable("buf");
    session.distribute();
    auto scalar = [&](int32_t v) { return session.data(Array::scalar<int32_t>(v)); };
    std::printf(
        "# synk's call path on %d cuda rank(s) against raw CUDA/NCCL in the same run, "
        "medians of %d (time per operation, us)\n",
        n, o.reps);
    std::printf("%-22s %10s %11s %11s %10s %9s\n", "what", "bytes", "synk_us", "raw_us", "added_us",
                "raw/synk");

    // The trivial call and its floor.
    Data two_rows = session.data(Array(DType::Float32, {2, 2}));
    const int call_iters = 2000;
    Data call_iters_data = scalar(call_iters);
    std::vector<double> synk_s, raw_s;
    for (int rep = 0; rep < o.reps; ++rep) {
      noop({two_rows});
      synk_s.push_back(secondsPer(call_iters, [&] { noop({two_rows}); }));
      raw_s.push_back(floor({call_iters_data}).at(0).as<double>()[0]);
    }
    row("trivial call", "-", harness::median(synk_s), harness::median(raw_s));

    // A small all_reduce waited for, against raw ncclAllReduce + cudaStreamSynchronize.
    session.broadcast({buf}, {Array(DType::Float32, {1024})});
    Data sync_each = scalar(1);
    synk_s.clear();
    raw_s.clear();
    for (int rep = 0; rep < o.reps; ++rep) {
      session.allReduce({buf}, ReduceOp::Sum);
      session.synchronize();
      synk_s.push_back(secondsPer(call_iters, [&] {
        session.allReduce({buf}, ReduceOp::Sum);
        session.synchronize();
      }));
      raw_s.push_back(raw_allreduce({call_iters_data, sync_each}).at(0).as<double>()[0]);
    }
    row("all_reduce + wait", "4 KiB", harness::median(synk_s), harness::median(raw_s));

    // Results to the master, copied to the host.
    for (double bytes : o.to_master) {
      const int64_t count = int64_t(bytes) / 4;
      session.broadcast({buf}, {Array(DType::Float32, {count})});
      const int iters = bytes <= (64 << 20) ? 50 : 10;
      Data iters_data = scalar(iters);
      struct Case {
        const char* what;
        int kind;  // nccl_peer::ToMaster
        std::function<void()> synk;
        double result_bytes;
      };
      const std::vector<Case> cases = {
          {"reduce to master", 0, [&] { (void)session.reduce({buf}, ReduceOp::Sum); }, bytes},
          {"gather to master", 1, [&] { (void)session.gather({buf}); }, bytes * n},
          {"get_value(rank 1)", 2, [&] { (void)session.getValue(1, {buf}); }, bytes},
      };
      for (const Case& c : cases) {
        if (c.kind == 2 && n < 2) continue;
        Data kind = scalar(c.kind);
        synk_s.clear();
        raw_s.clear();
        for (int rep = 0; rep < o.reps; ++rep) {
          c.synk();  // warm: the result's pinned block, the staging
          synk_s.push_back(secondsPer(iters, c.synk));
          raw_s.push_back(raw_to_master({kind, iters_data}).at(0).as<double>()[0]);
        }
        row(c.what, harness::formatBytes(c.result_bytes), harness::median(synk_s),
            harness::median(raw_s));
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_call_path: %s\n", e.what());
    return 1;
  }
}
