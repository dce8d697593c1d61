#pragma once
// What a job's child process reports to the sweeping process for one repetition, and its wire
// format (a byte string written to a pipe). A train job measures one point; a collectives job
// measures every point of one (backend, ranks) pair in one session.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "synk/harness/records/records.h"

namespace synk::harness {

struct PointOutcome {
  int point = 0;                         // Point::index
  PointStatus status = PointStatus::ok;  // ok | wrong | failed | interrupted
  std::string message;
  int64_t wrong = 0;
  int64_t steps = 0;
  std::vector<SampleRecord> samples;        // repetition fields are filled in by the sweep
  std::vector<GpuReading> gpus;             // telemetry of its timed phase, per GPU (NVML)
  std::vector<RankTimesRecord> rank_times;  // every rank's time per timed step (step_times)
};

struct JobOutcome {
  PointStatus status = PointStatus::ok;  // ok | failed (before any point ran) | interrupted
  std::string message;
  int64_t startup_ns = 0;  // fork, communicator, model load, distribute
  std::vector<PointOutcome> points;
};

std::string encodeOutcome(const JobOutcome& outcome);
// Throws RunFailed when the bytes are not a whole outcome (the child died while writing).
JobOutcome decodeOutcome(std::string_view bytes);

}  // namespace synk::harness
