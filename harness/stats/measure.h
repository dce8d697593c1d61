#pragma once
// Measurement conventions shared by every synk benchmark (nccl-tests' conventions):
//   algbw = bytes / time; busbw = algbw * factor(collective, ranks), the factor normalising each
//   collective to the bandwidth a ring would need per link, so it is comparable across rank
//   counts and collectives. Summaries quote the median of repeated samples. A size's element
//   counts follow nccl-tests too (collectiveShape): the runner allocates them, the tables print
//   them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "synk/core/dtype.h"
#include "synk/harness/records/collective.h"  // Collective
#include "synk/harness/stats/stats.h"         // median, percentile

namespace synk::harness {

// all_reduce: 2(n-1)/n; all_gather, gather, scatter, reduce_scatter: (n-1)/n; broadcast, reduce: 1.
double busbwFactor(Collective collective, int ranks);
// GB/s (1e9 bytes per second), like nccl-tests.
double algbwGBps(double bytes, double seconds);
double busbwGBps(Collective collective, int ranks, double bytes, double seconds);

// "8 B", "128 KiB", "32 MiB", "1 GiB"
std::string formatBytes(double bytes);

// Elements each rank sends and receives for nccl-tests' `size` (bytes): the whole buffer for
// all_reduce, broadcast and reduce; for gathers and scatter a per-rank part of size / ranks,
// rounded down to a multiple of 16 bytes.
struct CollectiveShape {
  size_t part = 0;   // elements per rank: the `count` column
  size_t total = 0;  // elements of the whole buffer
  int64_t bytes() const;
  size_t element_bytes = 0;
};
CollectiveShape collectiveShape(Collective op, int64_t bytes, int ranks, DType dtype);

}  // namespace synk::harness
