// The mlp's training step throughput, the DDP anchor's model by default: 4 x Linear(4096, 4096) +
// ReLU, Linear(4096, 10) (67.2 M parameters), SGD, cross-entropy, one fixed batch resident on the
// device. Per batch size: warm-up steps (the CUDA graph is captured on the second), then
// --repeats timings of --steps steps each; prints one JSON object per batch with the best and the
// median samples/s (the peer, scripts/pytorch/mlp_speed.py, reports the best of 5 x 50 steps).
//   bench_mlp --backend cuda --batches 64,512,4096 [--precision fp32|tf32|bf16]
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/measure.h"
#include "synk/synk.h"
#include "training/datasets.h"

namespace {

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

std::vector<int64_t> parseList(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    out.push_back(std::stoll(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  synk::ForkOptions fork;
  fork.n_parallel = 1;
  std::string batches, widths, precision, optimizer;
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
    synk::Session session = synk::fork(fork);
    for (int64_t batch : parseList(batches)) {
      synk::Model model =
          session.load(synk::pluginPath("synk_mlp"), {{"inputs", std::to_string(inputs)},
                                                      {"widths", widths},
                                                      {"classes", "10"},
                                                      {"optimizer", optimizer},
                                                      {"lr", "0.01"},
                                                      {"precision", precision}});
      const synk::training::Dataset data =
          synk::training::syntheticClassification(batch, inputs, 10, 1);
      synk::Data x = session.data(data.x, {.device_resident = true});
      synk::Data y = session.data(data.y, {.device_resident = true});
      synk::Function step = session.function(model, "train_step");
      for (int64_t k = 0; k < warmup; ++k)
        step({x, y});
      std::vector<double> rates;
      for (int64_t r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        for (int64_t k = 0; k < steps; ++k)
          step({x, y});
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        rates.push_back(double(steps * batch) / seconds);
      }
      double best = 0;
      for (double rate : rates)
        best = std::max(best, rate);
      const double med = synk::harness::median(rates);
      std::printf(
          "{\"bench\": \"mlp_step\", \"backend\": \"%s\", \"ranks\": %d, \"batch\": %lld, "
          "\"precision\": \"%s\", \"optimizer\": \"%s\", \"samples_per_s_best\": %.1f, "
          "\"samples_per_s_median\": %.1f, \"step_ms_median\": %.4f}\n",
          session.backend().c_str(), session.size(), static_cast<long long>(batch),
          precision.c_str(), optimizer.c_str(), best, med, 1e3 * double(batch) / med);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_mlp: %s\n", e.what());
    return 1;
  }
}
