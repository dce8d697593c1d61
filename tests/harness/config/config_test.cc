// harness/config.h and axis.h: what a config means, and every way it can be wrong.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "synk/harness/base/errors.h"
#include "synk/harness/config/axis.h"
#include "synk/harness/config/config.h"
#include "synk/harness/stats/stats.h"
#include "tests/harness/config/config_fuzz_target.h"

using namespace synk::harness;

namespace {

const char* kTrain = R"ini(# a comment
[experiment]
plugin = synk_bench_toy
function = train_step   # trailing comment
repetitions = 3

[model]
widths = 256,128

[input.x]
shape = batch, 64
[input.y]
shape = batch
dtype = int
range = 0:9

[axes]
backend = cpu, cuda
ranks = 1:8:pow2
batch = 64, 256
[axes.cpu]
ranks = 1, 2
)ini";

std::string readSource(const std::string& relative) {
  std::ifstream in(std::string(SYNK_SOURCE_DIR) + "/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string errorOf(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parseExperiment(text, "t.ini", sets);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("axis values: lists, ranges, powers of two, sizes", "[harness]") {
  using V = std::vector<int64_t>;
  CHECK(parseIntAxis("1,2,4,8") == V{1, 2, 4, 8});
  CHECK(parseIntAxis("64:4096:pow2") == V{64, 128, 256, 512, 1024, 2048, 4096});
  CHECK(parseIntAxis("8:1K:x4", 0, Unit::Bytes) == V{8, 32, 128, 512});
  CHECK(parseIntAxis("1:4") == V{1, 2, 3, 4});
  CHECK(parseIntAxis("0:100:25") == V{0, 25, 50, 75, 100});
  CHECK(parseIntAxis("1, 2, 2, 8:16:pow2") == V{1, 2, 8, 16});
  CHECK(parseSize("1K") == 1024);
  CHECK(parseSize("32M") == 32 << 20);
  CHECK(parseSize("2GiB") == int64_t{2} << 30);
  CHECK(parseSize("1GB") == int64_t{1} << 30);
  CHECK(parseIntAxis("8:1G:x2", 0, Unit::Bytes).size() == 28);
  CHECK_THROWS_WITH(parseIntAxis("4096:64"), Catch::Contains("ends before it starts"));
  CHECK_THROWS_WITH(parseIntAxis("3:10:pow2"), Catch::Contains("power of two"));
  CHECK_THROWS_WITH(parseIntAxis("1:1G", 0, Unit::Bytes), Catch::Contains("more than 4096 values"));
  CHECK_THROWS_WITH(parseIntAxis("1,,2"), Catch::Contains("empty item"));
  CHECK_THROWS_WITH(parseIntAxis("abc"), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(parseIntAxis("3T", 0, Unit::Bytes), Catch::Contains("unknown unit"));
  // A count takes no unit: 128k is refused, not read as 131072.
  CHECK_THROWS_WITH(parseIntAxis("32, 128k"), Catch::Contains("'128k' is a count"));
  CHECK_THROWS_WITH(parseIntAxis("1:4K:pow2"), Catch::Contains("'4K' is a count"));
  CHECK_THROWS_WITH(parseCount("12x"), Catch::Contains("'12x' is not an integer"));
  CHECK(parseIntAxis("32, 128K", 0, Unit::Bytes) == V{32, 131072});
  CHECK_THROWS_WITH(parseIntAxis("0", 1), Catch::Contains("below 1"));
  CHECK_THROWS_WITH(parseIntAxis("99999999999999999999"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(parseIntAxis("8E:16E:pow2", 0, Unit::Bytes), Catch::Contains("unknown unit"));
  CHECK_THROWS_WITH(parseSize("9000000000G"), Catch::Contains("too large"));
  CHECK(parseNameList(" cpu ,cuda") == std::vector<std::string>{"cpu", "cuda"});
  CHECK_THROWS_WITH(parseNameList("cpu,cpu"), Catch::Contains("listed twice"));
}

TEST_CASE("a train experiment: every section read into its typed field", "[harness]") {
  const Experiment e = parseExperiment(kTrain, "toy.ini");
  CHECK(e.name == "toy");
  CHECK(e.kind == ExperimentKind::Train);
  CHECK(e.plugin == "synk_bench_toy");
  REQUIRE(e.step.size() == 1);
  CHECK(e.step[0].name == "train_step");
  CHECK(e.repetitions == 3);
  CHECK(e.model.at("widths") == "256,128");
  REQUIRE(e.inputs.size() == 2);
  CHECK(e.inputs[0].name == "x");
  CHECK(e.inputs[0].shape[0].is_batch);
  CHECK(e.inputs[0].shape[1].value == 64);
  CHECK(e.inputs[1].dtype == "int32");  // "int" is nccl-tests' and numpy's spelling
  CHECK(e.inputs[1].range == std::pair{0.0, 9.0});
  CHECK(e.axes.ranks == std::vector<int64_t>{1, 2, 4, 8});
  CHECK(e.axes.ranks_for.at("cpu") == std::vector<int64_t>{1, 2});
  CHECK(e.axes.backend == std::vector<std::string>{"cpu", "cuda"});
  const std::string canonical = e.canonical();
  CHECK_THAT(canonical, Catch::Contains("axes.cpu.ranks = 1,2\n"));
  CHECK_THAT(canonical, Catch::Contains("model.widths = 256,128\n"));
  CHECK_THAT(canonical, Catch::Contains("experiment.warmup = 5\n"));  // defaults too
}

TEST_CASE("overrides: --set wins, and a step replaces a function", "[harness]") {
  const Experiment e = parseExperiment(
      kTrain, "toy.ini",
      {"axes.ranks=2", "experiment.step=grad, all_reduce(grad), update", "model.lr = 0.5"});
  CHECK(e.axes.ranks == std::vector<int64_t>{2});
  REQUIRE(e.step.size() == 3);
  CHECK(e.step[1].kind == StepAction::Kind::AllReduce);
  CHECK(e.step[1].name == "grad");
  CHECK(e.stepText() == "grad, all_reduce(grad), update");
  CHECK(e.model.at("lr") == "0.5");
  // Step times on by default and absent from the configuration; off, they enter it. A resident
  // input enters the inputs' description (and so the comparability key) only when on.
  CHECK(e.step_times);
  CHECK_FALSE(e.inputs[0].resident);
  CHECK_THAT(e.canonical(), !Catch::Contains("step_times") && !Catch::Contains("resident"));
  const Experiment r =
      parseExperiment(kTrain, "toy.ini", {"experiment.step_times=false", "input.x.resident=true"});
  CHECK_FALSE(r.step_times);
  CHECK(r.inputs[0].resident);
  CHECK_THAT(r.canonical(), Catch::Contains("experiment.step_times = false\n") &&
                                Catch::Contains("input.x.resident = true\n"));
  CHECK_THAT(errorOf(kTrain, {"input.x.resident=maybe"}), Catch::Contains("must be true or false"));
  CHECK_THAT(errorOf(kTrain, {"axes.ranks"}),
             Catch::Contains("--set axes.ranks: expected key=value"));
  CHECK_THAT(errorOf(kTrain, {"axes.ranks=0"}),
             Catch::Contains("--set axes.ranks=0: axes.ranks = '0'"));
}

TEST_CASE("[compare]: the regression thresholds of an experiment", "[harness]") {
  const Experiment defaults = parseExperiment(kTrain, "toy.ini");
  CHECK(defaults.compare.min_change == 0.05);
  CHECK(defaults.compare.min_repetitions == 5);
  const Experiment e = parseExperiment(std::string(kTrain) +
                                           "[compare]\nmin_change = 0.1\nnoise_factor = 3\n"
                                           "q = 0.01\nmin_repetitions = 8\n",
                                       "toy.ini");
  CHECK(e.compare.min_change == 0.1);
  CHECK(e.compare.noise_factor == 3);
  CHECK(e.compare.q == 0.01);
  CHECK(e.compare.min_repetitions == 8);
  // Stored with the run, where `compare` reads the baseline's.
  CHECK_THAT(e.canonical(), Catch::Contains("compare.min_change = 0.1\n") &&
                                Catch::Contains("compare.min_repetitions = 8\n"));
  CHECK_THAT(errorOf(kTrain, {"compare.q=1.5"}), Catch::Contains("must lie between 0 and 1"));
  CHECK_THAT(errorOf(kTrain, {"compare.min_repetitions=1"}), Catch::Contains("between 2 and"));
}

TEST_CASE("errors name the file, the line, the key and what is valid", "[harness]") {
  const std::string text = kTrain;
  CHECK_THAT(errorOf(text + "[experiment]\nrepetitons = 4\n"),
             Catch::Contains("t.ini:24: unknown key 'experiment.repetitons'") &&
                 Catch::Contains("did you mean 'experiment.repetitions'") &&
                 Catch::Contains("valid keys: ") && Catch::Contains("input.NAME.shape"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\nsteps = many\n"),
             Catch::Contains("t.ini:4: experiment.steps = 'many': 'many' is not an integer"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\n[axes]\nranks =\n"),
             Catch::Contains("t.ini:5: axes.ranks = '': an axis needs at least one value"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\n[axes]\nbatch = 4096:64\n"),
             Catch::Contains("ends before it starts"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\n[axes]\nbackend = tpu\n"),
             Catch::Contains("'tpu' is not one of cpu, cuda"));
  CHECK_THAT(errorOf("[experiment]\nfunction = f\n"),
             Catch::Contains("experiment.plugin is missing"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\n"),
             Catch::Contains("experiment.function (or experiment.step) is missing"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\nstep = g\n"),
             Catch::Contains("give either experiment.function or experiment.step"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nplugin = q\nfunction = f\n"),
             Catch::Contains("t.ini:3: key 'experiment.plugin' is given twice (first at t.ini:2)"));
  CHECK_THAT(errorOf("[experiment]\nthis line is not ini\n"),
             Catch::Contains("t.ini:2: cannot read 'this line is not ini'"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nfunction = f\n[input.x]\nshape = 4, 5\n"),
             Catch::Contains("input 'x' is scattered, so its shape must start with batch"));
  CHECK_THAT(
      errorOf("[experiment]\nplugin = p\nfunction = f\n[input.x]\nshape = batch\nrange = 3:1\n"),
      Catch::Contains("the range ends before it starts"));
  CHECK_THAT(errorOf("[experiment]\nplugin = p\nstep = a, all_reduce()\n"),
             Catch::Contains("all_reduce() names no variable"));
  CHECK_THAT(errorOf("[experiment]\nkind = collectives\n[axes]\nbatch = 4\n"),
             Catch::Contains("unknown key 'axes.batch' in a collectives experiment"));
  CHECK_THAT(errorOf("[experiment]\nkind = training\n"),
             Catch::Contains("must be one of train, collectives"));
}

TEST_CASE("a collectives experiment with nccl-tests' names", "[harness]") {
  const Experiment e = parseExperiment(
      "[experiment]\nkind = collectives\nsteps = 7\n[axes]\nop = all\nbackend = cpu, nccl\n"
      "bytes = 8:64:x2\ndtype = float, half\nredop = sum\n",
      "c.ini");
  CHECK(e.kind == ExperimentKind::Collectives);
  CHECK(e.axes.op.size() == 6);
  CHECK(e.axes.dtype == std::vector<std::string>{"float32", "float16"});
  CHECK(e.axes.bytes == std::vector<int64_t>{8, 16, 32, 64});
  CHECK(e.steps == 7);
  CHECK(e.repetitions == 1);
}

TEST_CASE("the shipped experiments parse", "[harness]") {
  for (const char* file : {"experiments/quickstart.ini", "experiments/mlp_scaling.ini",
                           "experiments/collectives.ini", "experiments/nodes_toy.ini"}) {
    INFO(file);
    const std::string text = readSource(file);
    REQUIRE_FALSE(text.empty());
    CHECK(test::parseFuzzInput(text));
  }
  const Experiment q = loadExperiment(std::string(SYNK_SOURCE_DIR) + "/experiments/quickstart.ini");
  CHECK(q.plugin == "synk_mlp");
  CHECK(q.axes.ranks_for.at("cpu") == std::vector<int64_t>{1, 2});
}

TEST_CASE("property: mutated configs parse or are refused with BadInput, never worse",
          "[harness]") {
  // The fuzz target's contract over many mutations of the shipped files: random byte edits,
  // inserted separators, cut and repeated lines. Anything but BadInput escaping fails the test.
  std::vector<std::string> seeds = {kTrain};
  for (const char* file :
       {"experiments/quickstart.ini", "experiments/mlp_scaling.ini", "experiments/collectives.ini"})
    seeds.push_back(readSource(file));
  const std::string alphabet = "[]=#:,.\n \t0123456789abxyz_-*()GKMpow2batch\xff\x00";
  Rng rng(2026);
  int parsed = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seeds[rng.below(seeds.size())];
    const int edits = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const size_t at = rng.below(text.size());
      switch (rng.below(5)) {
        case 0:
          text[at] = alphabet[rng.below(alphabet.size())];
          break;
        case 1:
          text.insert(at, 1, alphabet[rng.below(alphabet.size())]);
          break;
        case 2:
          text.erase(at, 1 + rng.below(8));
          break;
        case 3: {  // repeat a line
          const size_t begin = text.rfind('\n', at), end = text.find('\n', at);
          const size_t b = begin == std::string::npos ? 0 : begin + 1;
          text.insert(b,
                      text.substr(b, end == std::string::npos ? std::string::npos : end - b + 1));
          break;
        }
        default:
          text.resize(at);
          break;  // truncated
      }
    }
    const std::vector<std::string> sets =
        rng.below(4) == 0 ? std::vector<std::string>{"axes.ranks=" + std::to_string(rng.below(20))}
                          : std::vector<std::string>{};
    (test::parseFuzzInput(text, sets) ? parsed : refused)++;
  }
  CHECK(parsed > 100);  // the mutations were not all fatal: the parser's accepting paths ran too
  CHECK(refused > 100);
}
