#pragma once
// Runs with chosen repetition values, written through the Store as a sweep would write them, for
// the compare and history tests: each repetition is three steps of exactly its value on rank 0,
// so its median step time is the value (rounded to the nanosecond).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "synk/harness/base/hash.h"
#include "synk/harness/store/store.h"

namespace synk::harness::test {

struct SyntheticPoint {
  std::map<std::string, std::string> axes;
  std::vector<double> values_s;  // one per repetition
  PointStatus status = PointStatus::ok;
  std::string key;  // "": a hash of the experiment, the machine key and the axes
};

inline RunRecord syntheticRun(const std::string& experiment, const std::string& commit,
                              const std::string& started_at) {
  RunRecord run;
  run.experiment = experiment;
  run.kind = "train";
  run.config_text = "[experiment]\n";
  run.config_resolved = "experiment.name = " + experiment + "\nexperiment.scaling = weak\n";
  run.command_line = "synk-bench run " + experiment + ".ini";
  run.commit = commit;
  run.cpu_model = "Test CPU";
  run.cpu_cores = 2;
  run.machine_key = "machine-1";
  run.started_at = started_at;
  return run;
}

// Stores `run` with `points` and ends it with `status`; returns its id.
inline int64_t storeRun(Store& store, RunRecord run, const std::vector<SyntheticPoint>& points,
                        const std::string& status = "complete") {
  store.beginRun(run);
  int seq = 0;
  for (const SyntheticPoint& sp : points) {
    PointRecord p;
    p.run_id = run.id;
    p.seq = seq++;
    p.axes = sp.axes;
    p.status = sp.status;
    p.key = sp.key;
    if (p.key.empty()) {
      std::string identity = run.experiment + "\n" + run.machine_key + "\n";
      for (const auto& [name, value] : sp.axes)
        identity += name + "=" + value + "\n";
      p.key = hashHex(identity);
    }
    std::vector<RepetitionRecord> reps;
    std::vector<SampleRecord> samples;
    for (size_t r = 0; r < sp.values_s.size(); ++r) {
      RepetitionRecord rep;
      rep.repetition = static_cast<int>(r);
      rep.steps = 3;
      reps.push_back(rep);
      for (int step = 0; step < 3; ++step)
        samples.push_back({static_cast<int>(r), 0, step, std::llround(sp.values_s[r] * 1e9)});
    }
    store.addPoint(p, reps, samples);
  }
  store.endRun(run.id, status);
  return run.id;
}

// The values as the store returns them (whole nanoseconds).
inline std::vector<double> stored(const std::vector<double>& values_s) {
  std::vector<double> out;
  for (double v : values_s)
    out.push_back(double(std::llround(v * 1e9)) * 1e-9);
  return out;
}

}  // namespace synk::harness::test
