// What one collective over k variables costs: Session::allReduce of k small variables (float32,
// 4 elements each, model var_list) for k = 1, 16, 256, as one call. Prints the median time per
// call over --reps samples of --iters calls each (each sample ends when the master's device has
// finished: Variable::getValue synchronises it), and per variable.
//   bench_var_list [--reps 9] [--iters 2000] [--ks 1,16,256]
// Environment: SYNK_BENCH_BACKEND (cpu), SYNK_BENCH_RANKS (2), SYNK_BENCH_DEVICES ("0,0": ranks
// sharing a GPU, so collectives run host-staged), SYNK_BENCH_SPIN_US (the barrier's spin budget).
//
// Instruction counts (deterministic where wall time on a loaded machine is not):
//   bench_var_list --fixed N --case list_16   runs exactly N calls of one case and nothing else;
// cases: call (a trivial function call: scatter 2 rows, run, avg of a scalar, as synk-micro),
// all_reduce_8B (one variable of 2 float32), list_K (K variables). Under callgrind the cost per
// call is (Ir(2N) - Ir(N)) / N of the master's process, with the barrier's waits left out
// (scripts/callgrind-step-cost does all that).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "synk/synk.h"

using namespace synk;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int reps = 9;
  int iters = 2000;
  std::vector<int> ks = {1, 16, 256};
  long fixed = 0;  // > 0: the instruction-count mode
  std::string fixed_case;
};

std::vector<int> intList(const std::string& text) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = text.find(',', at);
    out.push_back(std::atoi(text.substr(at, comma - at).c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--reps") {
      o.reps = std::atoi(value.c_str());
    } else if (key == "--iters") {
      o.iters = std::atoi(value.c_str());
    } else if (key == "--ks") {
      o.ks = intList(value);
    } else if (key == "--fixed") {
      o.fixed = std::atol(value.c_str());
    } else if (key == "--case") {
      o.fixed_case = value;
    } else {
      throw std::runtime_error("unknown option " + key);
    }
  }
  return o;
}

ForkOptions forkOptions() {
  ForkOptions options;
  const char* ranks = std::getenv("SYNK_BENCH_RANKS");
  options.n_parallel = ranks && *ranks ? std::atoi(ranks) : 2;
  if (const char* backend = std::getenv("SYNK_BENCH_BACKEND"); backend && *backend) {
    options.backend = backend;
  }
  if (const char* devices = std::getenv("SYNK_BENCH_DEVICES"); devices && *devices) {
    options.devices = intList(devices);
  }
  if (const char* spin = std::getenv("SYNK_BENCH_SPIN_US"); spin && *spin) {
    options.spin = std::chrono::microseconds(std::atol(spin));
  }
  return options;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<Variable> firstVariables(const Model& model, int k) {
  std::vector<Variable> all = model.variables();
  all.resize(static_cast<size_t>(std::min<int>(k, static_cast<int>(all.size()))));
  return all;
}

// Exactly n calls of one case: what callgrind counts.
int runFixed(Session& session, const Options& o) {
  Model testkit = session.load(pluginPath("synk_testkit"));
  Model list = session.load(pluginPath("synk_bench_var_list"));
  Function noop = session.function(testkit, "noop");
  Data x = session.data(Array(DType::Float32, {2, 2}));
  Variable v = testkit.variable("v");
  session.broadcast({v}, {Array(DType::Float32, {1, 2})});  // 8 bytes
  session.distribute();
  const std::string& c = o.fixed_case;
  if (c == "call") {
    const std::vector<Data> inputs = {x};
    for (long i = 0; i < o.fixed; ++i)
      noop(inputs);
  } else if (c == "all_reduce_8B") {
    for (long i = 0; i < o.fixed; ++i)
      session.allReduce({v}, ReduceOp::Sum);
  } else if (c.rfind("list_", 0) == 0) {
    const std::vector<Variable> vars = firstVariables(list, std::atoi(c.c_str() + 5));
    for (long i = 0; i < o.fixed; ++i)
      session.allReduce(vars, ReduceOp::Sum);
  } else {
    std::fprintf(stderr, "bench_var_list: unknown case '%s'\n", c.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const ForkOptions fork_options = forkOptions();
    Session session = synk::fork(fork_options);
    if (o.fixed > 0) return runFixed(session, o);
    Model list = session.load(pluginPath("synk_bench_var_list"));
    session.distribute();
    std::printf(
        "# Session::allReduce of k float32 variables of 4 elements, %s backend, %d rank(s)%s\n",
        fork_options.backend.c_str(), session.size(),
        fork_options.devices.empty() ? "" : " (devices listed: ranks may share a GPU)");
    std::printf("# median of %d samples of %d calls\n", o.reps, o.iters);
    std::printf("%6s %14s %14s\n", "k", "us_per_call", "us_per_var");
    for (int k : o.ks) {
      const std::vector<Variable> vars = firstVariables(list, k);
      std::vector<double> samples;
      for (int rep = 0; rep < o.reps; ++rep) {
        session.allReduce(vars, ReduceOp::Sum);  // warm-up; the device finishes it first
        (void)vars[0].getValue();
        const auto start = Clock::now();
        for (int i = 0; i < o.iters; ++i)
          session.allReduce(vars, ReduceOp::Sum);
        (void)vars[0].getValue();
        samples.push_back(std::chrono::duration<double>(Clock::now() - start).count() / o.iters);
      }
      const double t = median(samples);
      std::printf("%6zu %14.2f %14.3f\n", vars.size(), t * 1e6, t * 1e6 / double(vars.size()));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_var_list: %s\n", e.what());
    return 1;
  }
}
