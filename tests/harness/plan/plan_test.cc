// harness/plan.h: the points of a sweep, the skips and their reasons, comparability keys.
#include <catch2/catch.hpp>
#include <set>

#include "synk/harness/config/config.h"
#include "synk/harness/plan/plan.h"

using namespace synk::harness;

namespace {

Experiment train(const std::vector<std::string>& sets = {}) {
  return parseExperiment(
      "[experiment]\nplugin = toy\nfunction = train_step\n[input.x]\nshape = batch, 4\n"
      "[axes]\nbackend = cpu, cuda\nranks = 1, 2, 4\nbatch = 8, 32\n",
      "t.ini", sets);
}

const Point& find(const Plan& plan, const std::string& backend, int ranks, int64_t batch) {
  for (const Point& p : plan.points) {
    if (p.backend == backend && p.ranks == ranks && p.batch == batch) return p;
  }
  FAIL("no point " << backend << " " << ranks << " " << batch);
  throw;
}

}  // namespace

TEST_CASE("the cartesian product per backend, with skips and reasons", "[harness]") {
  const Plan plan = makePlan(train(), {2, 2, ""}, "m");
  REQUIRE(plan.points.size() == 12);
  CHECK(plan.jobs == 12);
  CHECK_FALSE(find(plan, "cpu", 2, 8).skipped);
  CHECK(find(plan, "cpu", 4, 8).reason ==
        "4 CPU ranks on 2 hardware threads (set experiment.oversubscribe = true to run it)");
  CHECK_FALSE(find(plan, "cuda", 2, 32).skipped);
  CHECK(find(plan, "cuda", 4, 32).reason == "needs 4 GPUs, this machine has 2");
  const Plan no_gpu =
      makePlan(train(), {8, 0, "no NVIDIA GPU found: libcuda.so.1 is missing"}, "m");
  CHECK(find(no_gpu, "cuda", 1, 8).reason == "no GPU here: no NVIDIA GPU found");
  CHECK(no_gpu.runnable() == 6);
  const Plan over = makePlan(train({"experiment.oversubscribe=true"}), {2, 0, ""}, "m");
  CHECK_FALSE(find(over, "cpu", 4, 8).skipped);
}

TEST_CASE("weak and strong scaling: the rows a step scatters", "[harness]") {
  const Plan weak = makePlan(train(), {8, 8, ""}, "m");
  CHECK(find(weak, "cpu", 4, 32).rows == 128);
  const Plan strong =
      makePlan(train({"experiment.scaling=strong", "axes.batch=2,32"}), {8, 8, ""}, "m");
  CHECK(find(strong, "cpu", 4, 32).rows == 32);
  CHECK(find(strong, "cpu", 4, 2).reason ==
        "a global batch of 2 rows leaves a rank of 4 without rows");
}

TEST_CASE("axes that do not apply collapse instead of multiplying", "[harness]") {
  // A fused step: the collectives are the plugin's, so the axis has no points of its own.
  const Plan fused = makePlan(train({"axes.collectives=nccl,host"}), {8, 8, ""}, "m");
  CHECK(fused.points.size() == 12);
  CHECK(fused.points[0].axes.count("collectives") == 0);
  // With an all_reduce action: nccl and host on cuda, shm (the only one) on cpu.
  const Plan split = makePlan(
      train({"experiment.step=grad, all_reduce(grad), update", "axes.collectives=nccl,host"}),
      {8, 8, ""}, "m");
  CHECK(split.points.size() == 6 + 12);
  CHECK(find(split, "cpu", 1, 8).collectives == "shm");
  // Per-backend axis values.
  const Plan per_backend =
      makePlan(train({"axes.cpu.ranks=1", "axes.cuda.batch=64"}), {8, 8, ""}, "m");
  CHECK(per_backend.points.size() == 2 + 3);
  // Model-option axes multiply and set the option.
  const Plan models =
      makePlan(train({"axes.precision=fp32,bf16", "model.lr=0.1"}), {8, 8, ""}, "m");
  CHECK(models.points.size() == 24);
  std::set<std::string> precisions;
  for (const Point& p : models.points) {
    precisions.insert(p.model.at("precision"));
    CHECK(p.axes.at("model.precision") == p.model.at("precision"));
    CHECK(p.model.at("lr") == "0.1");
  }
  CHECK(precisions == std::set<std::string>{"bf16", "fp32"});
}

TEST_CASE("comparability keys: equal for the same measurement, different otherwise", "[harness]") {
  const Plan a = makePlan(train(), {8, 8, ""}, "machine-1");
  const Plan b = makePlan(train(), {8, 8, ""}, "machine-1");
  const Plan other_machine = makePlan(train(), {8, 8, ""}, "machine-2");
  const Plan other_option = makePlan(train({"model.lr=0.5"}), {8, 8, ""}, "machine-1");
  const Plan more_steps = makePlan(train({"experiment.steps=100"}), {8, 8, ""}, "machine-1");
  for (size_t i = 0; i < a.points.size(); ++i) {
    CHECK(a.points[i].key == b.points[i].key);
    CHECK(a.points[i].key == more_steps.points[i].key);  // how long it is measured is not what
    CHECK(a.points[i].key != other_machine.points[i].key);
    CHECK(a.points[i].key != other_option.points[i].key);
    for (size_t j = 0; j < i; ++j)
      CHECK(a.points[i].key != a.points[j].key);
  }
}

TEST_CASE("collectives: placements per op, roots, redops and their skips", "[harness]") {
  const Experiment e = parseExperiment(
      "[experiment]\nkind = collectives\n[axes]\nop = all\nbackend = cpu, nccl, host\n"
      "ranks = 2, 4\nbytes = 8, 1K\ndtype = float, int32\nredop = sum, avg\nroot = 0, 3\n",
      "c.ini");
  const Plan plan = makePlan(e, {4, 2, ""}, "m");
  CHECK(plan.jobs == 6);  // backend x ranks
  int all_reduce_out = 0, all_reduce_in = 0, broadcast_out = 0, reduce_in = 0, gathers_in = 0;
  for (const Point& p : plan.points) {
    if (p.op == Collective::AllReduce) {
      ++(p.placement == Placement::InPlace ? all_reduce_in : all_reduce_out);
      CHECK(p.root == -1);
    }
    if (p.op == Collective::Broadcast && p.placement == Placement::OutOfPlace) ++broadcast_out;
    if (p.op == Collective::Reduce && p.placement == Placement::InPlace) ++reduce_in;
    if ((p.op == Collective::Gather || p.op == Collective::AllGather ||
         p.op == Collective::Scatter) &&
        p.placement == Placement::InPlace)
      ++gathers_in;
    if (p.op == Collective::AllGather) CHECK(p.redop == "none");
    if (p.redop == "avg" && p.dtype == "int32" && p.root < p.ranks && p.backend == "cpu") {
      CHECK(p.reason == "avg needs a floating-point dtype");
    }
    if (p.root == 3 && p.ranks == 2) CHECK(p.reason == "root 3 is not a rank of 2");
    if (p.backend == "nccl" && p.ranks == 4) {
      CHECK(
          p.reason ==
          "NCCL needs one GPU per rank: 4 ranks, 2 GPU(s) here (the host backend can share GPUs)");
    }
    if (p.backend == "host" && p.ranks == 4 && p.op == Collective::Broadcast && p.root == 0)
      CHECK_FALSE(p.skipped);
  }
  // 3 backends x 2 ranks x 2 dtypes x 2 redops x 2 bytes
  // Both of nccl-tests' column groups: out of place and in place.
  CHECK(all_reduce_out == 3 * 2 * 2 * 2 * 2);
  CHECK(all_reduce_in == 3 * 2 * 2 * 2 * 2);
  CHECK(broadcast_out == 3 * 2 * 2 * 2 * 2);  // x 2 roots, no redop
  CHECK(reduce_in == 3 * 2 * 2 * 2 * 2 * 2);  // x 2 roots
  CHECK(gathers_in == 0);
}

TEST_CASE("launched points: nodes x ranks per node, the session's ranks, stored axes",
          "[harness]") {
  const Plan plan = makePlan(train({"experiment.launch=mpirun -np {nodes}", "axes.nodes=1,2",
                                    "axes.backend=cpu", "axes.ranks=1,2", "axes.batch=8"}),
                             {2, 0, ""}, "m");
  REQUIRE(plan.points.size() == 4);
  const Point& two_by_two = plan.points[3];
  CHECK(two_by_two.nodes == 2);
  CHECK(two_by_two.ranks_per_node == 2);
  CHECK(two_by_two.ranks == 4);  // what speedup is counted over
  CHECK(two_by_two.rows == 32);  // weak scaling: per-rank batch x the session's ranks
  CHECK(two_by_two.axes.at("nodes") == "2");
  CHECK(two_by_two.axes.at("ranks_per_node") == "2");
  CHECK(two_by_two.axes.at("ranks") == "4");
  CHECK_FALSE(two_by_two.skipped);  // 2 ranks a node on 2 threads: the CPU limit is per node
  CHECK(plan.points[0].ranks == 1);
  // Forked points have neither (and keep the keys they had before launch lines existed).
  const Plan forked = makePlan(train({"axes.backend=cpu"}), {2, 0, ""}, "m");
  CHECK(forked.points[0].nodes == 0);
  CHECK(forked.points[0].axes.count("nodes") == 0);
  // Another launch line measures another thing: its points' keys differ.
  const Plan srun = makePlan(train({"experiment.launch=srun -N {nodes}", "axes.nodes=1,2",
                                    "axes.backend=cpu", "axes.ranks=1,2", "axes.batch=8"}),
                             {2, 0, ""}, "m");
  CHECK(srun.points[3].key != two_by_two.key);
}

TEST_CASE("launched cuda points: other machines' GPUs are theirs to judge, simulated nodes ours",
          "[harness]") {
  // Swept from a machine without GPUs (a login node): the nodes hold the GPUs.
  const Plan cluster = makePlan(train({"experiment.launch=srun -N {nodes}", "axes.nodes=2",
                                       "axes.backend=cuda", "axes.ranks=8", "axes.batch=8"}),
                                {4, 0, "no GPU here"}, "m");
  REQUIRE(cluster.points.size() == 1);
  CHECK_FALSE(cluster.points[0].skipped);
  CHECK(cluster.points[0].ranks == 16);
  // Simulated nodes split this host's 2 GPUs: 2 x 2 does not fit.
  const Plan simulated =
      makePlan(train({"experiment.launch=mpirun -np {nodes} -x SYNK_SIMULATE_NODES=1",
                      "axes.nodes=2", "axes.backend=cuda", "axes.ranks=1,2", "axes.batch=8"}),
               {4, 2, ""}, "m");
  REQUIRE(simulated.points.size() == 2);
  CHECK_FALSE(simulated.points[0].skipped);
  CHECK(simulated.points[1].skipped);
  CHECK(simulated.points[1].reason == "needs 4 GPUs, this machine has 2");
}
