// train: trains the mlp plugin data-parallel on Fashion-MNIST (Debian's dataset-fashion-mnist)
// or synthetic data, evaluates the whole test set after every epoch (one call, --eval-slices
// slices per rank), and reports test accuracy and the time to reach --target.
//   train --ranks 2 --optimizer adam --lr 1e-3 --batch 256 --target 0.88
// Exit status: 0 when the target was reached (or none was set), 1 when it was not or on an error
// (the reason on stderr), 2 for bad options.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "synk/synk.h"
#include "synk/training/datasets.h"
#include "synk/training/trainer.h"

namespace {

namespace po = boost::program_options;
using namespace synk;
using namespace synk::training;

struct Config {
  ForkOptions fork;
  std::string data;
  int64_t synthetic_rows = 0;
  int64_t synthetic_features = 0;
  ModelOptions model;
  TrainerOptions trainer;
  FitOptions fit;
  std::string resident;
  bool json = false;
};

Config parse(int argc, char** argv) {
  Config c;
  c.fork.n_parallel = 1;
  std::string widths, optimizer, lr, precision, seed, bucket_bytes, graph;
  int64_t batch = 256;
  bool two_phase = false;
  std::vector<std::string> extra_options;
  po::options_description desc(
      "train: the mlp on Fashion-MNIST (or synthetic data), data-parallel");
  desc.add_options()("help,h", "show this help")(
      "backend", po::value(&c.fork.backend)->default_value("cpu"), "cpu or cuda")(
      "ranks", po::value(&c.fork.n_parallel)->default_value(1), "number of ranks")(
      "data", po::value(&c.data)->default_value(defaultFashionMnistDir()),
      "Fashion-MNIST directory, or 'synthetic'")(
      "synthetic-rows", po::value(&c.synthetic_rows)->default_value(60000),
      "synthetic: training rows (the test set is a sixth of it)")(
      "synthetic-features", po::value(&c.synthetic_features)->default_value(784),
      "synthetic: features")("widths", po::value(&widths)->default_value("256,128"),
                             "hidden widths")(
      "optimizer", po::value(&optimizer)->default_value("adam"), "update rule")(
      "lr", po::value(&lr)->default_value("0.001"), "learning rate")(
      "precision", po::value(&precision)->default_value("fp32"), "fp32, tf32, bf16 (cuda)")(
      "seed", po::value(&seed)->default_value("0"), "parameter and shuffle seed")(
      "bucket-bytes", po::value(&bucket_bytes),
      "gradient all-reduce bucket size (default: the mlp's)")("cuda-graph", po::value(&graph)->default_value("true"),
                                         "replay steps as a CUDA graph")(
      "batch", po::value(&batch)->default_value(256), "global batch size")(
      "epochs", po::value(&c.fit.max_epochs)->default_value(20), "at most this many epochs")(
      "warmup-steps", po::value(&c.fit.warmup_steps)->default_value(0),
      "steps and an evaluation before the clock starts, every variable restored after (as the "
      "PyTorch peer's warm-up and capture)")("target",
                                             po::value(&c.fit.target_accuracy)->default_value(0.88),
                                             "stop at this test accuracy (0: run every epoch)")(
      "eval-slices", po::value(&c.fit.eval_slices)->default_value(1),
      "slices per rank of the evaluation call")("resident",
                                                po::value(&c.resident)->default_value("auto"),
                                                "keep the data on the GPUs: yes, no, auto (cuda)")(
      "two-phase", po::bool_switch(&two_phase), "grad then update instead of train_step")(
      "model", po::value(&extra_options)->composing(),
      "another mlp option as KEY=VALUE, repeatable (e.g. gemm=cublas, fuse_update=false)")(
      "json", po::bool_switch(&c.json), "print the result as one JSON object");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "train: " << e.what() << "\n" << desc;
    std::exit(2);
  }
  if (vm.count("help")) {
    std::cout << desc;
    std::exit(0);
  }
  c.model = {{"widths", widths},       {"optimizer", optimizer}, {"lr", lr},
             {"precision", precision}, {"seed", seed},           {"cuda_graph", graph}};
  if (!bucket_bytes.empty()) c.model["bucket_bytes"] = bucket_bytes;
  for (const std::string& option : extra_options) {
    const size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "train: --model '" << option << "' is not KEY=VALUE\n";
      std::exit(2);
    }
    c.model[option.substr(0, eq)] = option.substr(eq + 1);
  }
  c.trainer.fused = !two_phase;
  c.fit.epoch.batch = batch;
  c.fit.epoch.seed = std::stoull(seed);
  return c;
}

// Each epoch's own seconds (its evaluation included): the first carries the one-time costs
// (graph captures, library warm-up), the others the steady state.
std::string epochSeconds(const FitResult& r) {
  std::string list;
  double before = 0;
  for (const EpochReport& e : r.epochs) {
    char item[32];
    std::snprintf(item, sizeof item, "%s%.4f", list.empty() ? "" : ", ", e.seconds - before);
    list += item;
    before = e.seconds;
  }
  return list;
}

void printJson(const Config& c, const FitResult& r, int ranks, const std::string& backend) {
  const EpochReport& last = r.epochs.back();
  std::printf(
      "{\"backend\": \"%s\", \"ranks\": %d, \"batch\": %lld, \"epochs\": %d, \"reached\": %s, "
      "\"target\": %.4f, \"test_accuracy\": %.4f, \"test_loss\": %.5f, \"seconds\": %.4f, "
      "\"steps\": %lld, \"epoch_seconds\": [%s], \"first_step_seconds\": %.5f, "
      "\"second_step_seconds\": %.5f, \"first_evaluation_seconds\": %.5f, "
      "\"warmup_steps\": %d, \"warmup_seconds\": %.4f}\n",
      backend.c_str(), ranks, static_cast<long long>(c.fit.epoch.batch), last.epoch,
      r.reached ? "true" : "false", c.fit.target_accuracy, last.test.accuracy, last.test.loss,
      r.seconds, static_cast<long long>(last.steps * last.epoch), epochSeconds(r).c_str(),
      r.first_step_seconds, r.second_step_seconds, r.first_evaluation_seconds, c.fit.warmup_steps,
      r.warmup_seconds);
}

int run(Config c) {
  Session session = fork(c.fork);  // first: nothing may touch CUDA before
  Split data;
  if (c.data == "synthetic") {
    data.train = syntheticClassification(c.synthetic_rows, c.synthetic_features, 10, 1);
    data.test = syntheticClassification(c.synthetic_rows / 6, c.synthetic_features, 10, 2);
  } else {
    data = loadFashionMnist(c.data);
  }
  c.model["inputs"] = std::to_string(data.train.x.shape()[1]);
  c.model["classes"] = std::to_string(data.train.classes);
  const bool resident = c.resident == "yes" || (c.resident == "auto" && c.fork.backend != "cpu");
  const DataOptions placement{.device_resident = resident};
  Data train_x = session.data(data.train.x, placement),
       train_y = session.data(data.train.y, placement);
  Data test_x = session.data(data.test.x, placement), test_y = session.data(data.test.y, placement);
  Model model = session.load(pluginPath("synk_mlp"), c.model);
  Trainer trainer(session, model, c.trainer);
  if (!c.json) {
    std::printf("train: %d rank(s) on %s, %lld training and %lld test rows, batch %lld%s\n",
                session.size(), session.backend().c_str(),
                static_cast<long long>(data.train.rows()), static_cast<long long>(data.test.rows()),
                static_cast<long long>(c.fit.epoch.batch), resident ? ", data on the devices" : "");
    c.fit.progress = [](const EpochReport& e) {
      std::printf("epoch %2d  train loss %.4f  test loss %.4f  test accuracy %.4f  %.3f s\n",
                  e.epoch, e.train_loss, e.test.loss, e.test.accuracy, e.seconds);
      std::fflush(stdout);
    };
  }
  const FitResult result = fit(trainer, train_x, train_y, test_x, test_y, c.fit);
  if (c.json) printJson(c, result, session.size(), session.backend());
  if (c.fit.target_accuracy <= 0) return 0;
  const EpochReport& last = result.epochs.back();
  if (!result.reached) {
    std::fprintf(stderr, "train: test accuracy %.4f after %d epochs, below the target %.4f\n",
                 last.test.accuracy, last.epoch, c.fit.target_accuracy);
    return 1;
  }
  if (!c.json) {
    std::printf("reached test accuracy %.4f >= %.4f at epoch %d after %.3f s\n", last.test.accuracy,
                c.fit.target_accuracy, last.epoch, result.seconds);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: %s\n", e.what());
    return 1;
  }
}
