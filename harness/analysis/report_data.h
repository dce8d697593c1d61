#pragma once
// A stored run, read back and summarised for the reports (console, HTML, exports).
#include <cstdint>
#include <string>
#include <vector>

#include "synk/harness/analysis/analysis.h"
#include "synk/harness/store/store.h"

namespace synk::harness {

struct RunData {
  RunRecord run;
  std::string status;  // run.status, or "failed" for a run whose process died while running
  std::vector<AnalysedPoint> points;
  std::vector<double> slowest_s;  // collectives: per point, slowest-rank median (0: none)
  bool collectives() const { return run.kind == "collectives"; }
  bool micro() const { return run.kind == "micro"; }  // imported Google Benchmark results
};

// Throws BadInput when there is no such run. `options.exclude_throttled` leaves repetitions
// during which a GPU throttled out of every statistic (the warnings say how many).
RunData loadRun(const Store& store, int64_t run_id, const SummaryOptions& options = {});

// "running" runs whose writer is gone (killed, crashed, the machine rebooted) show as failed.
std::string effectiveStatus(const RunRecord& run);

// A point's label from its axes: backend first, then name=value ("cpu batch=32 ranks=2").
std::string pointLabel(const std::map<std::string, std::string>& axes);

// A run reference, as every command takes one: "12" (a run id), "latest" or "" (the newest run),
// a baseline's name, or a tag (its newest run), tried in that order. Throws BadInput naming what
// was looked for and the baselines there are.
int64_t resolveRunRef(const Store& store, const std::string& text);

}  // namespace synk::harness
