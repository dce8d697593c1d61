#pragma once
// The answer a report leads with, in one or two sentences per experiment, from the same numbers
// as its tables (pure: tests/harness/report/headline_test.cc):
//   train:       per backend (and collectives path), the most ranks measured: "2 GPUs (cuda,
//                nccl): 96 % efficiency, 1.93x at batch 64 per rank"; where both collectives
//                paths ran, "NCCL 3.1x faster than host staging at 8 GPUs, batch 64"; and the
//                energy per sample there when NVML measured it;
//   collectives: per op and rank count, each backend's best busbw and the size it was reached
//                at, and where two backends share sizes the first one's ratio at the largest:
//                "all_reduce, 2 ranks: NCCL busbw 350 GB/s (1 GiB); 3.1x host staging at 32 MiB";
//   micro:       how many benchmarks, the fastest and the slowest.
// Plus how many points failed, were wrong or were skipped, and how many carry noise warnings.
#include <string>
#include <vector>

#include "synk/harness/analysis/report_data.h"
#include "synk/harness/config/config.h"

namespace synk::harness {

std::vector<std::string> headline(const RunData& data, Scaling scaling);

// "32 MiB", "1 GiB", "8 B": a byte size as people say it.
std::string sizeText(int64_t bytes);

}  // namespace synk::harness
