// A synk program run under mpirun with simulated nodes (SYNK_SIMULATE_NODES=1) to check one
// session over several nodes (cluster/README.md); session_nodes_test.sh starts it and reads what
// it prints. Every launcher calls synk::fork(); only node 0's returns, as the master.
//   session_nodes_check ok RANKS_PER_NODE     the session's size, 300 barrier steps, then close:
//       every node's processes end and the job ends cleanly
//   session_nodes_check kill RANKS_PER_NODE   the master steps until a rank of another node is
//       killed (the test script kills it): it must raise PeerFailure naming that rank
//   session_nodes_check step-times RANKS_PER_NODE   ForkOptions::step_times: refused by every
//       launcher, before anything forks
//   session_nodes_check bench RANKS_PER_NODE  barrier steps: medians of 5 runs of 2000 (a
//       benchmark, not a test)
//   session_nodes_check bench-allreduce RANKS_PER_NODE   a 64 MiB float32 variable all-reduced
//       across the nodes, median of 11 (leader_link_check bench measures MPI_Allreduce beside it)
//   session_nodes_check models RANKS_PER_NODE [MASTER_RANK]   the test model (synk_testkit): a
//       call without inputs whose outputs are reduced, every variable collective with every op on
//       every dtype (also on values whose result depends on the order of the ranks), calls
//       on a scattered Data input (then written again, then grown: a new generation), a scatter
//       from a Data, three steps of the mlp (all-reduces inside its calls), collectives on a
//       variable larger than the leaders' pipeline chunk; each result printed exactly ("value:
//       ..." lines, floats in hex; the large ones as digests)
//   session_nodes_check models-local N [MASTER_RANK]   the same on one machine, N ranks, no
//       launcher: the test script compares the two outputs line for line
//   session_nodes_check kill-launcher RANKS_PER_NODE   the same, node 1's launcher killed: the
//       launcher watch (cluster/launcher_watch.h) raises PeerFailure naming it at once (the step
//       deadline is a minute); with SYNK_LAUNCHER_WATCH=0 the step's 2 s deadline raises Timeout
//       naming node 1's ranks
//   session_nodes_check stop-launcher RANKS_PER_NODE   the same, node 1's launcher stopped
//       (SIGSTOP): with SYNK_LAUNCHER_SILENCE=5 the watch raises Timeout naming it as silent
//       within seconds (the step deadline is a minute)
//   session_nodes_check ship-rows 1   2 x 1: calls on a Data of 64 rows; node 1's copy holds
//       only the rows its rank read (its segment's allocated bytes), results exact
//   session_nodes_check kill-master RANKS_PER_NODE   the master steps until the script kills it
//       (node 0's launcher): the other nodes must end on their own
// SYNK_CHECK_BACKEND=cuda runs the session on the cuda backend (session_nodes_cuda_test.sh: the
// simulated nodes split the host's GPUs); then `ok` also checks that host-staged collectives,
// which do not cross nodes, are refused by name.
// Before fork() each launcher writes its pid to $SYNK_CHECK_PID_DIR/node-<launcher index>.pid
// (the script finds a remote rank there: the node's ranks are its launcher's children).
// The master prints "master: ..." lines; exit 0 when the scenario went as it should.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "synk/core/error.h"
#include "synk/synk.h"

using namespace synk;

namespace {

void writePid() {
  const char* dir = std::getenv("SYNK_CHECK_PID_DIR");
  const char* index = std::getenv("OMPI_COMM_WORLD_RANK");
  if (dir == nullptr || index == nullptr) return;
  std::ofstream(std::string(dir) + "/node-" + index + ".pid") << getpid() << "\n";
}

double barrierMicros(Session& session, int steps) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    session.barrier();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         steps;
}

// Every element exactly: integers in decimal, floating values in hex (%a).
void printValue(const std::string& what, const Array& a) {
  std::string line = "value: " + what + ":";
  char buf[64];
  for (int64_t i = 0; i < a.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %a", a.flat(i));
    line += buf;
  }
  std::printf("%s\n", line.c_str());
}

// The bits of a floating dtype's significand after the point.
int mantissaBits(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return 10;
    case DType::BFloat16:
      return 7;
    case DType::Float32:
      return 23;
    default:
      return 52;
  }
}

// FNV-1a over an array's bytes: a large result compared line for line without printing it.
void printDigest(const std::string& what, const Array& a) {
  uint64_t hash = 1469598103934665603ull;
  const auto* bytes = static_cast<const unsigned char*>(a.data());
  for (size_t i = 0; i < a.bytes(); ++i)
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  std::printf("value: %s: %lld elements, fnv1a %016llx, first %a, last %a\n", what.c_str(),
              static_cast<long long>(a.size()), static_cast<unsigned long long>(hash), a.flat(0),
              a.flat(a.size() - 1));
}

// Collectives larger than the leaders' pipeline chunk (4 MiB, LeaderCommunicator::kChunkBytes):
// a float32 variable of 2.5 chunks and 3 elements, so several chunks and a short last one, on
// values whose sums round differently in another order.
void runLarge(Session& session) {
  const int64_t elements = (int64_t{5} << 19) + 3;
  Model model = session.load(pluginPath("synk_bench_var_list"),
                             {{"count", "1"}, {"elements", std::to_string(elements)}});
  Variable v = model.variable("v0");
  const int64_t ranks = session.size();
  std::vector<float> values(static_cast<size_t>(ranks * elements));
  for (int64_t r = 0; r < ranks; ++r) {
    for (int64_t i = 0; i < elements; ++i) {
      const double magnitude = static_cast<double>((i * 2654435761 + r * 97) % 1000003) + 0.5;
      const double sign = (i + r) % 3 == 0 ? -1.0 : 1.0;
      values[static_cast<size_t>(r * elements + i)] = static_cast<float>(
          sign * magnitude * std::pow(10.0, static_cast<double>((i + r) % 9 - 4)));
    }
  }
  const Array input = Array::of<float>({ranks * elements}, values);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Avg}) {
    session.scatter({v}, {input.view()});
    session.allReduce({v}, op);
    printDigest(str("large all_reduce ", reduceOpName(op)), session.getValue(ranks - 1, {v}).at(0));
  }
  session.scatter({v}, {input.view()});
  printDigest("large reduce sum", session.reduce({v}, ReduceOp::Sum).at(0));
  session.scatter({v}, {input.view()});
  session.broadcast({v});
  printDigest("large broadcast", session.getValue(ranks - 1, {v}).at(0));
}

// The test model's call and variable collectives, every result printed.
void runModels(Session& session) {
  Model model = session.load(pluginPath("synk_testkit"));
  Function info = session.function(model, "rank_info");
  const std::vector<Array> outs = info({});
  for (size_t k = 0; k < outs.size(); ++k)
    printValue(str("rank_info output ", k), outs[k]);
  Function fill = session.function(model, "fill_ranked");
  const char* typed[] = {"var_f32", "var_f64", "var_i32", "var_i64",
                         "var_u8",  "var_f16", "var_bf16"};
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg}) {
    for (const char* name : typed) {
      Variable v = model.variable(name);
      if (op == ReduceOp::Avg && !isFloating(v.dtype())) continue;
      fill({});
      session.allReduce({v}, op);
      printValue(str(name, " all_reduce ", reduceOpName(op)), session.gather({v}, 1).at(0));
      fill({});
      printValue(str(name, " reduce ", reduceOpName(op)), session.reduce({v}, op).at(0));
    }
  }
  // Values whose combination depends on the order of the ranks (float rounding, -0 and +0 and a
  // NaN under max/min, integer wrap): across nodes the reductions must follow one machine's rank
  // order exactly. Each rank's 4 elements are scattered, then reduced with every op.
  const int64_t ranks = session.size();
  for (const char* name : typed) {
    Variable v = model.variable(name);
    const bool floating = isFloating(v.dtype());
    std::vector<double> values;
    for (int64_t r = 0; r < ranks; ++r) {
      for (int64_t i = 0; i < 4; ++i) {
        const double sign = r % 2 == 0 ? 1.0 : -1.0;
        if (!floating) {
          const double magnitude = static_cast<double>((r * 97 + i * 61) % 1000 + 1);
          values.push_back(v.dtype() == DType::UInt8 ? std::fmod(magnitude, 256.0)
                                                     : sign * magnitude * 1000003.0);
        } else if (i == 0) {  // max/min keep the first of -0 and +0: rank 0's
          values.push_back(r == 0 ? 0.0 : -0.0);
        } else if (i == 1) {  // and of a NaN: rank 0's NaN wins, a later one would not
          values.push_back(r == 0 ? std::nan("") : 0.7 * static_cast<double>(r + 1));
        } else if (i == 2) {  // small terms absorbed by a large one, or added up first
          const double big = std::ldexp(1.0, mantissaBits(v.dtype()) + 2);
          values.push_back(r == 0 ? big : r == ranks - 1 ? -big : 0.75 * static_cast<double>(r));
        } else {
          values.push_back(sign * (1.0 + 0.37 * static_cast<double>(r)) *
                           std::pow(10.0, static_cast<double>(r % 7 - 3)));
        }
      }
    }
    const Array input = Array::of<double>({ranks * 4}, values).castTo(v.dtype());
    for (ReduceOp op :
         {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg}) {
      if (op == ReduceOp::Avg && !floating) continue;
      session.scatter({v}, {input.view()});
      session.allReduce({v}, op);
      printValue(str(name, " ordered all_reduce ", reduceOpName(op)), session.gather({v}, 1).at(0));
      session.scatter({v}, {input.view()});
      printValue(str(name, " ordered reduce ", reduceOpName(op)), session.reduce({v}, op).at(0));
    }
  }
  runLarge(session);
  // Data: a call's scattered input (every node gets the Data), then a new version (written
  // again), then a new generation (grown), each read on every node; a scatter from a Data.
  Function plus = session.function(model, "x_plus_v");
  auto values = [](int64_t n, double scale, double shift) {
    std::vector<float> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      out[static_cast<size_t>(i)] = static_cast<float>(scale * static_cast<double>(i % 9) + shift);
    return out;
  };
  const int64_t n = session.size();
  const int64_t rows_x = 8 * n;  // the test model's v holds 8 rows on each rank
  Data xs = session.data(Array::of<float>({rows_x, 2}, values(rows_x * 2, 0.25, 1.0 / 3.0)));
  const std::vector<Array> first = plus({xs});
  for (size_t k = 0; k < first.size(); ++k)
    printValue(str("x_plus_v output ", k), first[k]);
  xs.setValue(Array::of<float>({rows_x, 2}, values(rows_x * 2, -1.0 / 7.0, 0.5)));
  printValue("x_plus_v after setValue", plus({xs}).at(0));
  // A new generation (the allocation grows); the call takes a range of its rows.
  xs.setValue(Array::of<float>({3 * rows_x, 2}, values(6 * rows_x, 0.2, -1.0)));
  CallOptions middle;
  middle.batch = Selection::range(rows_x, 2 * rows_x);
  printValue("x_plus_v after growing", plus({xs}, middle).at(0));
  // Rows shipped only where read (core/step/ship_data.h): other rows, a node's share of which
  // its copy lacks; then rows by index list over every node (some held there, some not, one
  // repeated) — each read on every node.
  CallOptions later;
  later.batch = Selection::range(2 * rows_x, 3 * rows_x);
  printValue("x_plus_v on later rows", plus({xs}, later).at(0));
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < rows_x; ++i)
    picked.push_back(i == 1 ? 0 : (i * 7 + 3) % (3 * rows_x));
  CallOptions listed;
  listed.batch = Selection::indices(picked);
  printValue("x_plus_v on listed rows", plus({xs}, listed).at(0));
  // Index lists of 12,000 rows (96 KB), twice (the payload blob rewritten in place on every
  // node), then 30,000 (it grows: a new generation): each command is larger than the control
  // block's 64 KiB, so its arguments travel in a blob of the master's, shipped to every node first.
  // Then 9,000 dropped Data: their releases alone pass 64 KiB, and go in a shipped blob too.
  Function total = session.function(model, "int_total");
  const int64_t int_rows = 40, int_cols = 3;
  std::vector<int64_t> ints(static_cast<size_t>(int_rows * int_cols));
  for (size_t i = 0; i < ints.size(); ++i)
    ints[i] = static_cast<int64_t>(i * i % 1009) - 500;
  Data int_data = session.data(Array::of<int64_t>({int_rows, int_cols}, ints));
  auto listedTotal = [&](int64_t count, int64_t stride) {
    std::vector<int64_t> many;
    int64_t want = 0;
    for (int64_t i = 0; i < count; ++i) {
      many.push_back((i * stride + 11) % int_rows);
      for (int64_t c = 0; c < int_cols; ++c)
        want += ints[static_cast<size_t>(many.back() * int_cols + c)];
    }
    CallOptions long_list;
    long_list.batch = Selection::indices(many);
    const Array got = total({int_data}, long_list).at(0);
    if (got.flat(0) != static_cast<double>(want)) {
      throw std::runtime_error(
          str("int_total on ", count, " listed rows: ", got.flat(0), ", want ", want));
    }
    printValue(str("int_total on ", count, " listed rows (stride ", stride, ")"), got);
  };
  listedTotal(12000, 37);
  listedTotal(12000, 13);
  listedTotal(30000, 7);
  for (int i = 0; i < 9000; ++i)
    session.data(Array::scalar<int32_t>(i));  // dropped at once: a release each
  listedTotal(100, 3);
  Variable v = model.variable("var_f64");
  std::vector<double> rows(static_cast<size_t>(n * 4));  // var_f64 holds 4 on each rank
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = static_cast<double>(i) * 1.5 + 0.1;
  session.scatter({v}, {session.data(Array::of<double>({n * 4}, rows))});
  printValue("var_f64 scattered from Data", session.gather({v}, 0).at(0));
  // A set_value from a Data: only the last rank's node reads it (shipped there alone).
  Data last_rows = session.data(Array::of<double>({4}, {2.5, -1.25, 3.0, 0.5}));
  session.setValue(static_cast<int>(n - 1), {v}, std::vector<Data>{last_rows});
  printValue("var_f64 set on the last rank from a Data",
             session.getValue(static_cast<int>(n - 1), {v}).at(0));
  fill({});
  session.broadcast({v});
  printValue("var_f64 broadcast", session.gather({v}, 1).at(0));
  fill({});
  session.allGather({v});
  printValue("var_f64 all_gather then gather", session.gather({v}, 1).at(0));
  printValue("var_f64 of the last rank", session.getValue(session.size() - 1, {v}).at(0));

  // A model whose calls all-reduce inside (the mlp's fused training step: its gradients summed
  // over the ranks during the call, in buckets), a few steps on scattered rows.
  Model mlp = session.load(pluginPath("synk_mlp"), {{"inputs", "6"},
                                                    {"widths", "5"},
                                                    {"classes", "3"},
                                                    {"optimizer", "sgd"},
                                                    {"lr", "0.1"},
                                                    {"seed", "1"}});
  Function train = session.function(mlp, "train_step");
  const int64_t mlp_rows = 4 * n;
  std::vector<int32_t> labels(static_cast<size_t>(mlp_rows));
  for (int64_t i = 0; i < mlp_rows; ++i)
    labels[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7) % 3);
  Data x = session.data(Array::of<float>({mlp_rows, 6}, values(mlp_rows * 6, 0.13, -0.4)));
  Data y = session.data(Array::of<int32_t>({mlp_rows}, labels));
  for (int step = 0; step < 3; ++step)
    printValue(str("mlp train_step ", step, " loss"), train({x, y}).at(0));
  printValue("mlp params", session.getValue(session.size() - 1, {mlp.variable("params")}).at(0));
}

// Allocated bytes and size of the largest Data segment of node `node` (simulated on this host:
// its names carry its launcher's pid, from SYNK_CHECK_PID_DIR). Shared memory is allocated as
// written, so the allocated bytes are the rows shipped there.
std::pair<int64_t, int64_t> nodeDataSegment(int node) {
  const char* dir = std::getenv("SYNK_CHECK_PID_DIR");
  if (dir == nullptr) return {-1, -1};
  std::string pid;
  std::ifstream(std::string(dir) + "/node-" + std::to_string(node) + ".pid") >> pid;
  std::pair<int64_t, int64_t> largest{-1, -1};
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    static const std::regex blob(".*b[0-9]+-g[0-9]+$");  // blobName(): a Data's blob
    if (name.rfind("synk-", 0) != 0 || name.find("-" + pid + "-") == std::string::npos ||
        !std::regex_match(name, blob)) {
      continue;
    }
    struct stat st {};
    if (stat(entry.path().c_str(), &st) != 0) continue;
    if (st.st_size > largest.second)
      largest = {static_cast<int64_t>(st.st_blocks) * 512, st.st_size};
  }
  return largest;
}

// 2 x 1: a Data of 64 rows of 16 KiB (int64), read by calls on every node; after each, how much
// of it node 1 holds: only the rows its rank read (half, then three quarters), never the rest.
int shipRows(Session& session) {
  Model model = session.load(pluginPath("synk_testkit"));
  Function total = session.function(model, "int_total");
  const int64_t rows = 64, width = 2048;
  std::vector<int64_t> values(static_cast<size_t>(rows * width));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int64_t>(i % 1000) - 300;
  Data d = session.data(Array::of<int64_t>({rows, width}, values));
  auto expected = [&](int64_t begin, int64_t end) {
    int64_t sum = 0;
    for (int64_t i = begin * width; i < end * width; ++i)
      sum += values[static_cast<size_t>(i)];
    return sum;
  };
  const int64_t bytes = rows * width * 8;
  int failures = 0;
  auto check = [&](const char* what, const Array& got, int64_t want, double held_fraction) {
    const auto [held, size] = nodeDataSegment(1);
    // Exactly the rows' pages, give or take the reservation's page rounding (tmpfs pages).
    const auto rows_bytes = static_cast<int64_t>(held_fraction * static_cast<double>(bytes));
    const bool ok = got.flat(0) == static_cast<double>(want) && size >= bytes &&
                    held >= rows_bytes && held <= rows_bytes + 2 * 65536;
    std::printf("master: %s %s: total %.0f (want %lld); node 1 holds %lld of %lld bytes\n",
                ok ? "ok" : "FAIL", what, got.flat(0), static_cast<long long>(want),
                static_cast<long long>(held), static_cast<long long>(size));
    failures += ok ? 0 : 1;
  };
  check("every row", total({d}).at(0), expected(0, rows), 0.5);        // rank 1: rows 32-63
  check("every row again", total({d}).at(0), expected(0, rows), 0.5);  // nothing new
  CallOptions first_half;
  first_half.batch = Selection::range(0, rows / 2);  // rank 1: rows 16-31, not there yet
  check("rows 0-31", total({d}, first_half).at(0), expected(0, rows / 2), 0.75);
  return failures == 0 ? 0 : 1;
}

// The master steps until the test script kills something of node 1 and the step raises Failure
// (printed as "master: <name>: <what>", exit 0), for at most a minute.
template <typename Failure>
int stepUntil(Session& session, const char* name) {
  std::printf("master: ready\n");
  std::fflush(stdout);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  try {
    while (std::chrono::steady_clock::now() < give_up)
      session.barrier();
  } catch (const Failure& e) {
    std::printf("master: %s: %s\n", name, e.what());
    return 0;
  }
  std::printf("master: FAIL no %s within 60 s\n", name);
  return 1;
}

template <typename F>
void expectRefusal(const char* what, F&& f) {
  try {
    f();
    std::printf("master: FAIL %s was not refused\n", what);
  } catch (const UsageError& e) {
    std::printf("master: refused: %s\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: session_nodes_check SCENARIO RANKS_PER_NODE [MASTER_RANK]\n");
    return 2;
  }
  const std::string scenario = argv[1];
  writePid();
  ForkOptions options;
  const char* backend = std::getenv("SYNK_CHECK_BACKEND");
  options.backend = backend != nullptr ? backend : "cpu";
  // Generous where nothing is meant to be late: a CI host running other tests beside this one
  // slows every spinning rank and bridge of these oversubscribed simulated nodes.
  const char* watch = std::getenv("SYNK_LAUNCHER_WATCH");
  const bool watched = watch == nullptr || std::string(watch) != "0";
  options.timeout = std::chrono::seconds(scenario == "kill-launcher" && !watched ? 2 : 60);
  if (argc == 4) options.master_rank = std::atoi(argv[3]);
  if (scenario == "models-local") {
    options.n_parallel = std::atoi(argv[2]);
  } else {
    options.ranks_per_node = std::atoi(argv[2]);
  }
  if (scenario == "step-times") {  // refused on every node, before forking
    options.step_times = true;
    try {
      fork(options);
      std::printf("launcher: FAIL %s over several nodes was not refused\n", scenario.c_str());
      return 1;
    } catch (const UsageError& e) {
      std::printf("launcher: refused: %s\n", e.what());
      return 0;
    }
  }
  try {
    Session session = fork(options);
    if (scenario == "models" || scenario == "models-local") {
      runModels(session);
      session.close();
      std::printf("master: closed\n");
      return 0;
    }
    std::printf("master: %d ranks, master rank %d\n", session.size(), session.masterRank());
    std::fflush(stdout);
    if (scenario == "ok") {
      barrierMicros(session, 300);
      if (options.backend == "cuda") {
        Model model = session.load(pluginPath("synk_testkit"));
        Variable v = model.variable("var_f32");
        expectRefusal("host-staged all_reduce",
                      [&] { session.allReduce({v}, ReduceOp::Sum, {.native = false}); });
        session.barrier();  // still usable after the refusal
      }
      session.close();
      std::printf("master: closed\n");
      return 0;
    }
    if (scenario == "bench-allreduce") {
      // A 64 MiB float32 variable (synk_bench_var_list) all-reduced (sum) across the nodes:
      // medians of 11, beside leader_link_check bench's MPI_Allreduce (the script runs both).
      Model model = session.load(pluginPath("synk_bench_var_list"),
                                 {{"count", "1"}, {"elements", std::to_string(16 << 20)}});
      Variable v = model.variable("v0");
      std::vector<double> ms;
      for (int i = 0; i < 12; ++i) {
        const auto start = std::chrono::steady_clock::now();
        session.allReduce({v}, ReduceOp::Sum);
        session.barrier();  // a posted all_reduce returns early: its end is the next step's start
        if (i > 0) {
          ms.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
        }
      }
      std::sort(ms.begin(), ms.end());
      std::printf("master: session all_reduce 64 MiB %.2f ms (median of %zu; min %.2f, max %.2f)\n",
                  ms[ms.size() / 2], ms.size(), ms.front(), ms.back());
      return 0;
    }
    if (scenario == "bench") {
      barrierMicros(session, 500);  // warm-up
      std::vector<double> runs;
      for (int run = 0; run < 5; ++run)
        runs.push_back(barrierMicros(session, 2000));
      std::sort(runs.begin(), runs.end());
      std::printf("master: barrier step %.2f us (median of 5 runs of 2000; min %.2f, max %.2f)\n",
                  runs[2], runs.front(), runs.back());
      return 0;
    }
    if (scenario == "ship-rows") {
      const int code = shipRows(session);
      session.close();
      return code;
    }
    if (scenario == "kill") return stepUntil<PeerFailure>(session, "PeerFailure");
    // Node 1's launcher killed: the launcher watch says so; without it, the step deadline.
    if (scenario == "kill-launcher" && watched)
      return stepUntil<PeerFailure>(session, "PeerFailure");
    if (scenario == "kill-launcher") return stepUntil<Timeout>(session, "Timeout");
    // Node 1's launcher stopped: silent past SYNK_LAUNCHER_SILENCE, a Timeout naming it.
    if (scenario == "stop-launcher") return stepUntil<Timeout>(session, "Timeout");
    if (scenario == "kill-master") return stepUntil<Error>(session, "Error");
    std::fprintf(stderr, "session_nodes_check: unknown scenario '%s'\n", scenario.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::printf("master: FAIL %s\n", e.what());
    return 1;
  }
}
