#include "synk/harness/run/collectives_runner.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "synk/collectives/registry.h"
#include "synk/core/error.h"
#include "synk/core/process_group.h"
#include "synk/core/shm_heap.h"
#include "synk/harness/run/collective_ops.h"

namespace synk::harness {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMessageBytes = 512;

// What each rank reports per point, in a mapping shared with the master (made before fork).
struct Slot {
  int64_t status;  // 0 not run, 1 ok, 2 failed
  int64_t wrong;
  char message[kMessageBytes];
  int64_t times[1];  // timesPerRank() of them
};

class Results {
 public:
  Results(int ranks, size_t points, int times_per_rank)
      : points_(points),
        times_(times_per_rank),
        slot_bytes_((offsetof(Slot, times) + sizeof(int64_t) * std::max(1, times_per_rank) + 63) /
                    64 * 64),
        mapping_(slot_bytes_ * points * static_cast<size_t>(ranks) + 64) {}
  Slot& at(int rank, size_t point) {
    auto* base = static_cast<std::byte*>(mapping_.data());
    return *reinterpret_cast<Slot*>(base +
                                    (static_cast<size_t>(rank) * points_ + point) * slot_bytes_);
  }
  int timesPerRank() const { return times_; }

 private:
  size_t points_;
  int times_;
  size_t slot_bytes_;
  SharedMapping mapping_;
};

struct Job {
  const Experiment& e;
  std::vector<const Point*> points;  // runnable only
  BackendFactory& factory;
  bool native;
  int gpus;
  Results& results;
  const StopWord& stop;
  Clock::time_point ready{};  // the master saw every rank's backend ready
  bool interrupted = false;
  std::vector<int> telemetry_gpus;                // CUDA ordinals NVML reads (master)
  std::vector<std::vector<GpuReading>> readings;  // master: per point, its telemetry
  SharedCounter* points_done = nullptr;           // master counts finished points here
};

CollectiveParams paramsOf(const Experiment& e, const Point& p) {
  CollectiveParams params;
  params.op = p.op;
  params.dtype = parseDType(p.dtype);
  params.redop = p.redop == "none" ? ReduceOp::Sum : parseReduceOp(p.redop);
  params.root = std::max(0, p.root);
  params.bytes = p.bytes;
  params.in_place = p.placement == Placement::InPlace;
  params.warmup = e.warmup;
  params.iterations = e.steps;
  params.checks = e.check_iterations;
  params.blocking = e.blocking;
  params.back_to_back = e.timing == CollectiveTiming::Batch;
  return params;
}

// The master decides whether to go on to the next point (a stop asked for ends the job), and
// every rank follows: they stay in step.
bool nextPoint(ProcessGroup& group, const Job& job, const char* what) {
  Waiter go = group.commandWaiter(what);
  const bool stop = group.isMaster() && childShouldStop(job.stop);
  return group.barrier().arrive(go, BarrierSite::CommandStart, !stop);
}

// Everything a rank does, the master included.
void rankMain(ProcessGroup& group, Job& job) {
  const int rank = group.rank();
  std::unique_ptr<ShmHeap> heap;
  std::unique_ptr<Backend> backend;
  size_t k = 0;
  try {
    heap = std::make_unique<ShmHeap>(group.shmPrefix(), rank);
    // Device ranks share the GPUs round-robin when there are fewer (host staging only then).
    std::vector<int> devices;
    if (job.factory.bindsDevices()) {
      for (int r = 0; r < group.size(); ++r)
        devices.push_back(r % std::max(1, job.gpus));
    }
    const int ordinal = devices.empty() ? -1 : devices[static_cast<size_t>(rank)];
    RankEnvironment env{group, *heap, ordinal, devices};
    backend = createBackend(job.factory, env);
    Waiter ready = group.commandWaiter("every rank's backend");
    group.barrier().arrive(ready, BarrierSite::Startup);
    if (group.isMaster()) job.ready = Clock::now();
    // The master loads NVML now: every rank is forked (gpu_telemetry.h).
    std::optional<GpuTelemetry> telemetry;
    if (group.isMaster() && !job.telemetry_gpus.empty()) {
      telemetry = GpuTelemetry::open(job.telemetry_gpus);
      job.readings.resize(job.points.size());
    }
    RankSide side{group, *heap, *backend, job.native, telemetry ? &*telemetry : nullptr};
    // nccl-tests' warm-up pass over every size before the first is timed (collective_ops.h);
    // none with -w 0.
    for (size_t w = 0; job.e.warmup > 0 && w < job.points.size(); ++w) {
      if (!nextPoint(group, job, "warming up the next point")) break;  // seen below
      try {
        warmCollective(side, paramsOf(job.e, *job.points[w]));
      } catch (const std::exception& e) {
        // What leaves the group whole (an op with no case) the point's measurement reports, as
        // the loop below does; what ended it is this point's failure, not the first point's.
        if (!group.aborted()) continue;
        k = w;  // the handler below blames point k
        throw std::runtime_error(std::string("while warming up: ") + e.what());
      }
    }
    for (; k < job.points.size(); ++k) {
      if (!nextPoint(group, job, "the next point")) {
        job.interrupted = true;
        break;
      }
      Slot& slot = job.results.at(rank, k);
      std::string failure;
      try {
        const bool ok =
            measureCollective(side, paramsOf(job.e, *job.points[k]), slot.times, slot.wrong,
                              failure, telemetry ? &job.readings[k] : nullptr);
        slot.status = ok ? 1 : 2;
      } catch (const std::exception& e) {
        failure = e.what();
        slot.status = 2;
      }
      std::strncpy(slot.message, failure.c_str(), kMessageBytes - 1);
      if (group.isMaster() && job.points_done) job.points_done->add();
      if (group.aborted()) break;
    }
    Waiter end = group.commandWaiter("the end of the job");
    group.barrier().arrive(end, BarrierSite::CommandEnd);
  } catch (const std::exception& e) {
    if (k < job.points.size()) {
      Slot& slot = job.results.at(rank, k);
      slot.status = 2;
      std::strncpy(slot.message, e.what(), kMessageBytes - 1);
    }
  }
  if (backend && group.aborted()) backend->abort();
}

int workerMain(ProcessGroup& group, Job& job) {
  rankMain(group, job);
  // Stay until the master ends the group: a worker leaving early looks dead to it.
  if (!group.aborted()) {
    try {
      Waiter waiter = group.commandWaiter("the master ending the job");
      group.barrier().arrive(waiter, BarrierSite::CommandStart);
    } catch (const std::exception&) {
    }
  }
  return kExitOk;
}

// A back-to-back point stores one sample per rank and repetition (step 0: the mean per
// iteration); a per-iteration point one per iteration.
PointOutcome collect(Job& job, size_t k, int ranks, const std::string& abort_message) {
  PointOutcome out;
  out.point = job.points[k]->index;
  for (int r = 0; r < ranks; ++r) {
    const Slot& slot = job.results.at(r, k);
    if (slot.status != 1) {
      std::string why = slot.message[0] ? std::string(slot.message) : abort_message;
      if (why.empty()) why = "not run (an earlier point ended the group)";
      if (out.status != PointStatus::failed) out.message = "rank " + std::to_string(r) + ": " + why;
      out.status = PointStatus::failed;
      continue;
    }
    out.wrong += slot.wrong;
    for (int i = 0; i < job.results.timesPerRank(); ++i) {
      SampleRecord s;
      s.rank = r;
      s.step = i;
      s.ns = slot.times[i];
      out.samples.push_back(s);
    }
  }
  out.steps = job.e.steps;
  if (k < job.readings.size()) out.gpus = job.readings[k];
  if (out.status == PointStatus::ok && out.wrong > 0) {
    out.status = PointStatus::wrong;
    out.message = std::to_string(out.wrong) + " wrong element(s)";
  }
  return out;
}

}  // namespace

JobOutcome runCollectivesRepetition(const Experiment& e, const std::vector<const Point*>& points,
                                    int /*repetition*/, const StopWord& stop,
                                    const std::vector<int>& telemetry_gpus,
                                    SharedCounter* points_done) {
  JobOutcome outcome;
  std::vector<const Point*> runnable;
  for (const Point* p : points) {
    if (!p->skipped) runnable.push_back(p);
  }
  if (runnable.empty()) return outcome;
  const Point& first = *runnable.front();
  try {
    BackendRegistry registry = makeDefaultRegistry();
    BackendFactory* factory = registry.find(first.backend == "cpu" ? "cpu" : "cuda");
    if (!factory) throw InvalidArgument("no backend for " + first.backend);
    Results results(first.ranks, runnable.size(), timesPerRank(paramsOf(e, first)));
    Job job{.e = e,
            .points = runnable,
            .factory = *factory,
            .native = first.backend != "host",
            .gpus = factory->bindsDevices() ? factory->deviceCount() : 0,
            .results = results,
            .stop = stop,
            .telemetry_gpus = telemetry_gpus,
            .readings = {},
            .points_done = points_done};
    factory->checkBeforeFork();
    ProcessGroupOptions options;
    options.n_ranks = first.ranks;
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(e.timeout * 1000));
    options.yield_while_spinning =
        first.ranks > static_cast<int>(std::thread::hardware_concurrency());
    const auto start = Clock::now();
    auto group = ProcessGroup::create(options, [&](ProcessGroup& g) { return workerMain(g, job); });
    rankMain(*group, job);
    const std::string abort_message =
        group->aborted() ? std::string(group->control().abort_message) : "";
    if (!group->aborted()) {
      abortSession(group->control(), AbortReason::Shutdown, 0, "the collectives job finished");
    }
    group->shutdown(std::chrono::milliseconds(3000));
    if (job.ready > start) {
      outcome.startup_ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(job.ready - start).count();
    }
    if (job.interrupted) {
      outcome.status = PointStatus::interrupted;
      return outcome;
    }
    for (size_t k = 0; k < runnable.size(); ++k)
      outcome.points.push_back(collect(job, k, first.ranks, abort_message));
  } catch (const std::exception& error) {
    outcome.status = PointStatus::failed;
    outcome.message = error.what();
  }
  return outcome;
}

}  // namespace synk::harness
