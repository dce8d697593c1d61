#pragma once
// nccl-tests' table for a collectives run: size (B), count (elements), type, redop, root, then
// time (us), algbw (GB/s), busbw (GB/s) and #wrong for the out-of-place and the in-place
// variant. time is the median over iterations (and repetitions) of the slowest rank's time;
// algbw = size / time (GB/s = 1e9 B/s); busbw = algbw x the op's factor (measure.h). Variants
// a communicator does not offer print N/A. With several backends, one table side by side.
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/records/collective.h"

namespace synk::harness {

struct CollectiveCell {
  bool present = false;
  PointStatus status = PointStatus::ok;  // ok | wrong | failed | skipped (where present)
  std::string reason;
  double time_s = 0, algbw = 0, busbw = 0;
  double time_min_s = 0, time_max_s = 0;  // over the point's values (repetitions or iterations)
  int64_t wrong = 0;
};

struct CollectiveRow {
  std::string op, dtype, redop;          // op as stored
  std::optional<Collective> collective;  // op, parsed (collectiveOf)
  int root = -1, ranks = 1;
  int64_t size = 0;  // bytes moved (nccl-tests' size column)
  size_t count = 0;  // elements (per rank for gathers and scatter)
  std::map<std::string, std::array<CollectiveCell, 2>> cells;  // backend -> [out, in]
};

std::vector<CollectiveRow> collectiveRows(const RunData& data);
// The busbw factor of nccl-tests for op on n ranks.
double busbwFactorOf(const std::optional<Collective>& op, int ranks);
// A stored point's op axis, parsed (nullopt: no op axis, or a name synk-bench never wrote;
// its shape is then the whole buffer's, as all_reduce's, and its busbw factor 1).
std::optional<Collective> collectiveOf(const PointRecord& p);
// nccl-tests' name of a dtype: float, double, half, bfloat16, int32, int64, uint8.
std::string ncclTypeName(const std::string& dtype);

void printCollectivesTable(std::FILE* out, const RunData& data);

}  // namespace synk::harness
