// The mlp's training step throughput, the DDP anchor's model by default: 4 x Linear(4096, 4096) +
// ReLU, Linear(4096, 10) (67.2 M parameters), SGD, cross-entropy, one fixed batch resident on the
// device. Per batch size and variant (the mlp's `gemm` and `fuse_update` options): warm-up steps
// (cuBLASLt autotunes on the first, the CUDA graph is captured on the second), then --repeats
// timings of --steps steps each, the variants' timings interleaved (repeat r of every variant
// before repeat r + 1 of any) so drifting clocks hit them alike; prints one JSON object per
// (batch, variant) with the best and the median samples/s (the peer, scripts/pytorch/
// mlp_speed.py, reports the best of 5 x 50 steps).
//
// Synchronisation: a synk call returns once its step is done (the master waits for the device at
// the end of every call: core/step/call_exec.cc), so each timed step includes one host wait and the
// next step's launch after it. The PyTorch peer synchronises only at the end of each timing; the
// comparison therefore charges synk, not PyTorch, for per-step host round trips.
//   bench_mlp --backend cuda --batches 64,512,4096 [--precision fp32|tf32|bf16]
//             [--variants default | all | cublas/unfused,lt/fused,...]
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "synk/harness/stats/measure.h"
#include "synk/synk.h"
#include "synk/training/datasets.h"

namespace {

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    out.push_back(item);
  return out;
}

std::vector<int64_t> parseList(const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string& item : split(text))
    out.push_back(std::stoll(item));
  return out;
}

// "default" (the mlp's own defaults) or "<gemm>/<fused|unfused>".
struct Variant {
  std::string name;
  synk::ModelOptions options;
};

std::vector<Variant> parseVariants(const std::string& text) {
  const std::vector<std::string> all = {"cublas/unfused", "cublas/fused",     "lt/unfused",
                                        "lt/fused",       "lt_tuned/unfused", "lt_tuned/fused"};
  std::vector<Variant> out;
  for (const std::string& name : text == "all" ? all : split(text)) {
    if (name == "default") {
      out.push_back({name, {}});
      continue;
    }
    const size_t slash = name.find('/');
    const std::string gemm = name.substr(0, slash);
    const std::string fuse = slash == std::string::npos ? "" : name.substr(slash + 1);
    if ((gemm != "cublas" && gemm != "lt" && gemm != "lt_tuned") ||
        (fuse != "fused" && fuse != "unfused")) {
      throw std::invalid_argument("variant '" + name +
                                  "': use default, all, or <cublas|lt|lt_tuned>/<fused|unfused>");
    }
    out.push_back({name, {{"gemm", gemm}, {"fuse_update", fuse == "fused" ? "true" : "false"}}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  synk::ForkOptions fork;
  fork.n_parallel = 1;
  std::string batches, widths, precision, optimizer, variants;
  int64_t inputs = 4096, steps = 50, repeats = 5, warmup = 10;
  po::options_description desc("bench_mlp: training-step throughput of the mlp plugin");
  desc.add_options()("help,h", "show this help")(
      "backend", po::value(&fork.backend)->default_value("cuda"), "cpu or cuda")(
      "ranks", po::value(&fork.n_parallel)->default_value(1), "ranks")(
      "batches", po::value(&batches)->default_value("64,512,4096"), "global batch sizes")(
      "inputs", po::value(&inputs)->default_value(4096), "features")(
      "widths", po::value(&widths)->default_value("4096,4096,4096,4096"), "hidden widths")(
      "precision", po::value(&precision)->default_value("fp32"), "fp32, tf32, bf16")(
      "optimizer", po::value(&optimizer)->default_value("sgd"), "update rule")(
      "variants", po::value(&variants)->default_value("default"),
      "default (the mlp's defaults), all, or a list of <cublas|lt|lt_tuned>/<fused|unfused>")(
      "steps", po::value(&steps)->default_value(50), "steps per timing")(
      "repeats", po::value(&repeats)->default_value(5), "timings")(
      "warmup", po::value(&warmup)->default_value(10), "untimed steps first");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "bench_mlp: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  try {
    const std::vector<Variant> variant_list = parseVariants(variants);
    synk::Session session = synk::fork(fork);
    for (int64_t batch : parseList(batches)) {
      const synk::training::Dataset data =
          synk::training::syntheticClassification(batch, inputs, 10, 1);
      synk::Data x = session.data(data.x, {.device_resident = true});
      synk::Data y = session.data(data.y, {.device_resident = true});
      std::vector<synk::Model> models;
      std::vector<synk::Function> step;
      for (const Variant& variant : variant_list) {
        synk::ModelOptions options = {
            {"inputs", std::to_string(inputs)}, {"widths", widths}, {"classes", "10"},
            {"optimizer", optimizer},           {"lr", "0.01"},     {"precision", precision}};
        for (const auto& [key, value] : variant.options)
          options[key] = value;
        models.push_back(session.load(synk::pluginPath("synk_mlp"), options));
        step.push_back(session.function(models.back(), "train_step"));
        for (int64_t k = 0; k < warmup; ++k)
          step.back()({x, y});
      }
      std::vector<std::vector<double>> rates(variant_list.size());
      for (int64_t r = 0; r < repeats; ++r) {
        for (size_t v = 0; v < variant_list.size(); ++v) {
          const auto start = Clock::now();
          for (int64_t k = 0; k < steps; ++k)
            step[v]({x, y});
          const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
          rates[v].push_back(double(steps * batch) / seconds);
        }
      }
      for (size_t v = 0; v < variant_list.size(); ++v) {
        double best = 0;
        for (double rate : rates[v])
          best = std::max(best, rate);
        const double med = synk::harness::median(rates[v]);
        std::printf(
            "{\"bench\": \"mlp_step\", \"backend\": \"%s\", \"ranks\": %d, \"batch\": %lld, "
            "\"precision\": \"%s\", \"optimizer\": \"%s\", \"variant\": \"%s\", "
            "\"samples_per_s_best\": %.1f, \"samples_per_s_median\": %.1f, "
            "\"step_ms_median\": %.4f}\n",
            session.backend().c_str(), session.size(), static_cast<long long>(batch),
            precision.c_str(), optimizer.c_str(), variant_list[v].name.c_str(), best, med,
            1e3 * double(batch) / med);
      }
      std::fflush(stdout);
      std::fprintf(stderr, "bench_mlp: batch %lld done (%zu variants)\n",
                   static_cast<long long>(batch), variant_list.size());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_mlp: %s\n", e.what());
    return 1;
  }
}
