// Runs under mpirun (one process per simulated node, SYNK_SIMULATE_NODES=1) to check the node
// leaders' link (cluster/leader_link.h); leader_link_test.sh starts it and reads what it prints.
//   leader_link_check ok        barrier, a broadcast of NCCL-unique-id-sized bytes from node 0 and
//                               of 3 MB from the last node, a 4 MiB float32 all-reduce summed in
//                               node order, every dtype x op (avg, sum, prod, max, min) equal bit
//                               for bit to core's host kernels combining the nodes' inputs in node
//                               order, and the combinations core refuses refused by name
//   leader_link_check late      node 1 never comes to the barrier: node 0 must report a Timeout
//                               at its 500 ms deadline, then end (mpirun ends the job)
//   leader_link_check mismatch  a layout of one node more than the launch: refused by name
//   leader_link_check bench     64 MiB: the link's all-reduce against MPI_Allreduce(MPI_SUM),
//                               alternating, medians printed by node 0 (a benchmark, not a test)
// Exit 0 when every check held, 1 with "FAIL: ..." on stderr otherwise.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "synk/cluster/leader_link.h"
#include "synk/core/dtype.h"
#include "synk/core/error.h"
#include "synk/core/host_kernels.h"
#include "synk/core/reduce_op.h"

using namespace synk;
using namespace synk::cluster;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 1;
}

NodeLayout launchLayout() {
  const EnvLookup env = processEnvironment();
  return planNodes(detectLauncher(env),
                   {.ranks_per_node = 1, .simulate_nodes = simulateNodesRequested(env)});
}

// Node k's value for element i: fractions whose sums round, so the order of additions shows.
float valueOf(int node, size_t i) {
  return static_cast<float>(i % 1013) * 0.1f + static_cast<float>(node) * 1e-3f + 1.0f / 3.0f;
}

// Node k's element i of an all-reduce's input: integers from a hash (sums and products wrap);
// floats fractions whose combinations round, with signs, signed zeros (max and min keep the
// first of -0 and +0) and a NaN on one node at a time (max and min keep the first of a NaN).
void fillInput(std::vector<std::byte>& buf, size_t n, DType dtype, int node, int nodes) {
  const size_t elem = dtypeSize(dtype);
  buf.assign(n * elem, std::byte{0});
  for (size_t i = 0; i < n; ++i) {
    std::byte* p = buf.data() + i * elem;
    uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t(node) + 1) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    if (!isFloating(dtype)) {
      std::memcpy(p, &h, elem);  // the low bytes (little-endian)
      continue;
    }
    double v = static_cast<double>(i % 97) * 0.37 + node * 0.013 + 1.0 / 3.0;
    if (h % 5 == 0) v = -v;
    if (i % 101 == 0) v = node % 2 == 0 ? -0.0 : 0.0;
    if (i % 211 == 5 && (i / 211) % static_cast<size_t>(nodes) == static_cast<size_t>(node))
      v = std::numeric_limits<double>::quiet_NaN();
    host::storeFromDouble(p, dtype, v);
  }
}

// Every dtype with every op a collective takes: each equal, bit for bit, to core's host kernels
// combining the nodes' inputs in node order (avg: that sum times 1/nodes, as one machine's
// shared-memory reduction does); the combinations core refuses are refused naming op and dtype.
// Returns "" or what failed.
std::string checkEveryDTypeAndOp(LeaderLink& link) {
  const size_t n = 100'003;  // uneven slices over 2 and 3 nodes
  const ReduceOp ops[] = {ReduceOp::Avg, ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max,
                          ReduceOp::Min};
  int equal = 0, refused = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    const size_t elem = dtypeSize(dtype);
    for (ReduceOp op : ops) {
      const std::string what = str(dtypeName(dtype), " ", reduceOpName(op));
      std::vector<std::byte> data, want, input;
      fillInput(data, n, dtype, link.node(), link.nodes());
      if (!isCollectiveOp(op, dtype)) {
        try {
          link.allReduce(data.data(), n, dtype, op, what);
        } catch (const InvalidArgument& e) {
          const std::string named = str("'", reduceOpName(op), "'");
          if (std::string(e.what()).find(named) == std::string::npos ||
              std::string(e.what()).find(dtypeName(dtype)) == std::string::npos)
            return what + ": refused without naming both: " + e.what();
          if (link.node() == 0 && refused == 0) std::printf("node 0: refused: %s\n", e.what());
          ++refused;
          continue;
        }
        return what + ": accepted, core refuses it";
      }
      link.allReduce(data.data(), n, dtype, op, what);
      fillInput(want, n, dtype, 0, link.nodes());  // one machine's order: rank 0, then 1, 2, ...
      for (int k = 1; k < link.nodes(); ++k) {
        fillInput(input, n, dtype, k, link.nodes());
        host::accumulate(want.data(), input.data(), n, dtype, op);
      }
      if (op == ReduceOp::Avg)
        host::scaleCopy(want.data(), want.data(), n, dtype, 1.0 / link.nodes());
      for (size_t i = 0; i < n; ++i) {
        if (std::memcmp(data.data() + i * elem, want.data() + i * elem, elem) != 0) {
          return str(what, ": element ", i, " is ",
                     host::loadAsDouble(data.data() + i * elem, dtype), ", node order gives ",
                     host::loadAsDouble(want.data() + i * elem, dtype), " (bits differ)");
        }
      }
      ++equal;
    }
  }
  try {
    std::vector<float> data(4, 1.0f);
    link.allReduce(data.data(), data.size(), DType::Float32, ReduceOp::Gather, "a gather");
    return "float32 gather: accepted as an all-reduce";
  } catch (const InvalidArgument& e) {
    if (std::string(e.what()).find("'gather'") == std::string::npos)
      return str("float32 gather: refused without naming it: ", e.what());
    ++refused;
  }
  if (link.node() == 0) {
    std::printf("node 0: every dtype x op: %d equal to node order bit for bit, %d refused\n", equal,
                refused);
  }
  return "";
}

int checkOk() {
  LeaderLink link(launchLayout(), std::chrono::seconds(20));
  link.barrier("a first barrier");
  std::vector<std::byte> id;
  if (link.node() == 0) {
    for (int i = 0; i < 128; ++i)
      id.push_back(static_cast<std::byte>(i * 7 + 1));
  }
  link.broadcast(id, 0, "the unique id");
  if (id.size() != 128) return fail("the broadcast id has " + std::to_string(id.size()) + " bytes");
  for (int i = 0; i < 128; ++i) {
    if (id[i] != static_cast<std::byte>(i * 7 + 1))
      return fail("broadcast byte " + std::to_string(i));
  }
  const int last = link.nodes() - 1;
  std::vector<std::byte> big(link.node() == last ? 3'000'000 : 5, std::byte{0});
  if (link.node() == last) std::fill(big.begin(), big.end(), std::byte{0x5a});
  link.broadcast(big, last, "3 MB from the last node");
  if (big.size() != 3'000'000 || std::count(big.begin(), big.end(), std::byte{0x5a}) != 3'000'000)
    return fail("the 3 MB broadcast from the last node");
  const size_t n = 1 << 20;
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i)
    data[i] = valueOf(link.node(), i);
  link.allReduce(data.data(), n, DType::Float32, ReduceOp::Sum, "a 4 MiB all-reduce");
  for (size_t i = 0; i < n; ++i) {
    float want = valueOf(0, i);  // one machine's order: rank 0, then 1, 2, ...
    for (int k = 1; k < link.nodes(); ++k)
      want += valueOf(k, i);
    if (data[i] != want) {
      return fail("element " + std::to_string(i) + " is " + std::to_string(data[i]) +
                  ", the sum in node order " + std::to_string(want));
    }
  }
  const std::string failed = checkEveryDTypeAndOp(link);
  if (!failed.empty()) return fail(failed);
  link.barrier("the last barrier");
  std::printf("node %d of %d: ok\n", link.node(), link.nodes());
  return 0;
}

int checkLate() {
  LeaderLink link(launchLayout(), std::chrono::milliseconds(500));
  if (link.node() == 1) {
    pause();  // never at the barrier: until mpirun ends the job (node 0's exit status)
    return fail("node 1 woke up");
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    link.barrier("the step's barrier");
  } catch (const Timeout& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("node %d: %s (after %.2f s)\n", link.node(), e.what(), seconds);
    std::fflush(stdout);
    // A control plane that timed out ends the job: its MPI thread still waits in the barrier.
    std::_Exit(3);
  }
  return fail("the barrier completed without node 1");
}

int checkMismatch() {
  NodeLayout layout = launchLayout();
  layout.nodes += 1;
  try {
    LeaderLink link(layout, std::chrono::seconds(5));
  } catch (const InvalidArgument& e) {
    std::printf("refused: %s\n", e.what());
    return 0;
  }
  return fail("a layout of one node more than the launch was accepted");
}

double medianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int bench() {
  LeaderLink link(launchLayout(), std::chrono::seconds(60));
  const size_t n = (size_t{64} << 20) / sizeof(float);
  std::vector<float> data(n, 1.0f);
  std::vector<double> ours, theirs;
  for (int round = 0; round < 11; ++round) {
    link.barrier("bench");
    auto t = std::chrono::steady_clock::now();
    link.allReduce(data.data(), n, DType::Float32, ReduceOp::Sum, "bench");
    ours.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    link.barrier("bench");
    t = std::chrono::steady_clock::now();
    link.onMpiThread("bench", [&data, n] {  // the same thread hop as the link's own
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    theirs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    std::fill(data.begin(), data.end(), 1.0f);
  }
  if (link.node() == 0) {
    const double a = medianMs(ours), b = medianMs(theirs);
    std::printf(
        "64 MiB all-reduce over %d nodes, medians of 11: leader link %.2f ms, "
        "MPI_Allreduce(MPI_SUM) %.2f ms: %.1f %% of MPI's rate\n",
        link.nodes(), a, b, 100.0 * b / a);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "ok") return checkOk();
    if (mode == "late") return checkLate();
    if (mode == "mismatch") return checkMismatch();
    if (mode == "bench") return bench();
    return fail("usage: leader_link_check ok|late|mismatch|bench");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
