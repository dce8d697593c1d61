// CUDA collectives through synk's API against raw NCCL, in one run on one communicator:
//   for each size: raw ncclAllReduce loop (plugin nccl_peer, nccl-tests style), the same loop
//   with a stream synchronize after each call (raw+sync: what a caller waiting for each result
//   pays), the same number of Session::allReduce calls (NCCL), and of host-staged ones
//   (native = false); then the H2D bandwidth of scattering a Data input. Every figure is the
//   median of --reps samples. "added" is synk's time per call minus raw's; "vs sync" minus
//   raw+sync's.
//   bench_cuda_allreduce [--ranks N] [--reps R] [--sizes 8,32M,512M | none] [--scatter 512M | 0]
//                        [--staged 0] [--iters N] [--graphs 1]
// --graphs 1 adds three raw columns: a CUDA graph of one all_reduce launched per call
// (rawgraph_us), every call of a timing in one graph launched once (gpu_us: the device's time per
// call, no host in it) and the host's time to enqueue one call of the raw loop (issue_us). The
// graphs are captured on synk's communicator, and NCCL then adds host work to every call issued
// on it (NCCL_GRAPH_MIXING_SUPPORT): every later loop of the process, raw and synk's, pays it.
// Under mpirun with simulated nodes (SYNK_SIMULATE_NODES=1) it runs one session over the nodes
// (scripts/gpu-nodes-check): --staged 0 then, host staging does not cross nodes.
// Run the scatter in a process of its own (--sizes none): after the host-staged sweep has
// churned through gigabytes of shared memory, a fresh shared-memory segment's DMA measured
// 35 GB/s on an H100 host where a clean process gets 53 (cudaMallocHost memory: 54 in both).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  std::vector<double> sizes = {8, 128 << 10, 2 << 20, 32 << 20, 512 << 20};
  double scatter_bytes_per_rank = 512 << 20;
  bool staged = true;   // host-staged all_reduce beside NCCL's
  int iters = 0;        // calls per timing; 0: by size (itersFor), for NVLink speeds
  bool graphs = false;  // the raw graph columns
};

using test::parseSize;
using test::parseSizeList;

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--ranks") o.ranks = std::atoi(value.c_str());
    if (key == "--reps") o.reps = std::atoi(value.c_str());
    if (key == "--scatter") o.scatter_bytes_per_rank = parseSize(value);
    if (key == "--sizes") o.sizes = parseSizeList(value);
    if (key == "--staged") o.staged = value != "0";
    if (key == "--iters") o.iters = std::atoi(value.c_str());
    if (key == "--graphs") o.graphs = value != "0";
  }
  return o;
}

int itersFor(double bytes) {
  return bytes <= (1 << 20) ? 2000 : bytes <= (64 << 20) ? 200 : 30;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    Session session = synk::fork({.n_parallel = o.ranks, .backend = "cuda"});
    const int n = session.size();
    Model peer = session.load(pluginPath("synk_nccl_peer"));
    Function raw = session.function(
        peer, "raw_allreduce", {.broadcast = {"iters", "mode"}, .outputs = {{"seconds", "max"}}});
    Function touch = session.function(peer, "touch");
    Function sync = session.function(peer, "sync");
    Function raw_h2d = session.function(peer, "raw_h2d",
                                        {.broadcast = {"bytes"}, .outputs = {{"seconds", "max"}}});
    Variable buf = peer.variable("buf");
    session.distribute();
    std::printf("# synk CUDA all_reduce vs raw NCCL, %d ranks, float32 sum, medians of %d\n", n,
                o.reps);
    std::printf("%10s %10s %10s %10s %10s %10s %8s %9s %9s %12s %10s", "bytes", "raw_us",
                "raw_busbw", "rawsync_us", "synk_us", "synk_busbw", "ratio", "added_us", "vs_sync",
                "staged_us", "staged_bw");
    if (o.graphs) std::printf(" %11s %9s %9s", "rawgraph_us", "gpu_us", "issue_us");
    std::printf("\n");
    // nccl_peer::RawMode
    auto mode = [&](int32_t m) { return session.data(Array::scalar<int32_t>(m)); };
    Data no_sync = mode(0), sync_each = mode(1), graph_each = mode(2), one_graph = mode(3),
         issue_only = mode(4);
    for (double bytes : o.sizes) {
      const int64_t count = std::max<int64_t>(1, int64_t(bytes) / 4);
      session.broadcast({buf}, {Array(DType::Float32, {count})});
      const int iters = o.iters > 0 ? o.iters : itersFor(bytes);
      Data iters_data = session.data(Array::scalar<int32_t>(iters));
      std::vector<double> raw_s, raw_sync_s, synk_s, staged_s, graph_s, gpu_s, issue_s;
      for (int rep = 0; rep < o.reps; ++rep) {
        raw_s.push_back(raw({iters_data, no_sync}).at(0).as<double>()[0]);
        raw_sync_s.push_back(raw({iters_data, sync_each}).at(0).as<double>()[0]);
        if (o.graphs) {
          graph_s.push_back(raw({iters_data, graph_each}).at(0).as<double>()[0]);
          gpu_s.push_back(raw({iters_data, one_graph}).at(0).as<double>()[0]);
          issue_s.push_back(raw({iters_data, issue_only}).at(0).as<double>()[0]);
        }
        // synk: `iters` API calls, then a step that ends only when every rank's stream has
        // passed them (an output reduced through NCCL on the same streams).
        // Warm up, then wait for the GPUs (a barrier alone would not): the timed loop must not
        // include the tail of the warm-up's all_reduce.
        session.allReduce({buf}, ReduceOp::Sum);
        sync({});
        auto start = Clock::now();
        for (int i = 0; i < iters; ++i)
          session.allReduce({buf}, ReduceOp::Sum);
        sync({});
        synk_s.push_back(std::chrono::duration<double>(Clock::now() - start).count() / iters);
        if (!o.staged) continue;
        const int staged_iters = std::max(3, iters / 20);
        session.allReduce({buf}, ReduceOp::Sum, {.native = false});  // warm-up (staging grows)
        sync({});
        start = Clock::now();
        for (int i = 0; i < staged_iters; ++i) {
          session.allReduce({buf}, ReduceOp::Sum, {.native = false});
        }
        sync({});  // the last call's host-to-device copy is part of it
        staged_s.push_back(std::chrono::duration<double>(Clock::now() - start).count() /
                           staged_iters);
      }
      const double r = harness::median(raw_s), s = harness::median(synk_s),
                   h = o.staged ? harness::median(staged_s) : 0.0, rs = harness::median(raw_sync_s);
      using harness::Collective;
      const double rb = harness::busbwGBps(Collective::AllReduce, n, bytes, r);
      const double sb = harness::busbwGBps(Collective::AllReduce, n, bytes, s);
      const double hb = o.staged ? harness::busbwGBps(Collective::AllReduce, n, bytes, h) : 0.0;
      std::printf("%10s %10.2f %10.2f %10.2f %10.2f %10.2f %7.1f%% %9.2f %9.2f %12.2f %10.2f",
                  harness::formatBytes(bytes).c_str(), r * 1e6, rb, rs * 1e6, s * 1e6, sb,
                  100.0 * r / s, (s - r) * 1e6, (s - rs) * 1e6, h * 1e6, hb);  // 0: not run
      if (o.graphs) {
        std::printf(" %11.2f %9.2f %9.2f", harness::median(graph_s) * 1e6,
                    harness::median(gpu_s) * 1e6, harness::median(issue_s) * 1e6);
      }
      std::printf("\n");
      std::fflush(stdout);  // a row as soon as it is measured (a pipe buffers it otherwise)
    }
    if (o.scatter_bytes_per_rank <= 0) return 0;
    // Scatter: every rank copies its rows of a Data input host-to-device (pinned shm).
    const int64_t cols = 1024;
    const int64_t rows = int64_t(o.scatter_bytes_per_rank) / (cols * 4) * n;
    Array x(DType::Float32, {rows, cols});
    for (int64_t i = 0; i < x.size(); i += 1024)
      x.as<float>()[i] = float(i);
    Data data = session.data(x);
    touch({data});  // maps and pins the segment on every rank
    std::vector<double> scatter_s;
    for (int rep = 0; rep < std::max(o.reps, 5); ++rep) {
      const auto start = Clock::now();
      touch({data});
      scatter_s.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    const double per_rank = double(rows / n) * cols * 4;
    const double t = harness::median(scatter_s);
    // The peer: plain pinned copies, every rank at once (the slowest rank's time).
    Data bytes_data = session.data(Array::scalar<int64_t>(int64_t(per_rank)));
    std::vector<double> raw_h2d_s;
    for (int rep = 0; rep < std::max(o.reps, 5); ++rep) {
      raw_h2d_s.push_back(raw_h2d({bytes_data}).at(0).as<double>()[0]);
    }
    const double raw_t = harness::median(raw_h2d_s);
    std::printf(
        "# raw cudaMemcpyAsync from cudaMallocHost, %s per rank, every rank at once: "
        "%.2f ms = %.1f GB/s per GPU\n",
        harness::formatBytes(per_rank).c_str(), raw_t * 1e3, per_rank / raw_t * 1e-9);
    std::printf(
        "# scatter of a Data input: %s per rank in %.2f ms = %.1f GB/s per GPU "
        "(host-to-device, median of %zu)\n",
        harness::formatBytes(per_rank).c_str(), t * 1e3, per_rank / t * 1e-9, scatter_s.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_allreduce: %s\n", e.what());
    return 1;
  }
}
