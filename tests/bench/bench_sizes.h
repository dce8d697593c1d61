#pragma once
// The all-reduce sizes both CPU benchmarks measure (synk's shm and OpenMPI's), with fixed
// iteration counts: MPI ranks must run identical loops, and the same counts keep the two
// comparable. Times on the development machine: 1 us to 70 ms per op.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace synk::bench {

struct AllReduceSize {
  size_t bytes;
  int64_t iterations;
};

inline const std::vector<AllReduceSize>& allReduceSizes() {
  static const std::vector<AllReduceSize> sizes = {
      {8, 20000},
      {size_t{2} << 20, 200},
      {size_t{8} << 20, 50},
      {size_t{64} << 20, 10},
      {size_t{128} << 20, 5},
  };
  return sizes;
}

// nccl-tests' convention: busbw = algbw * 2(n-1)/n for all_reduce.
inline double allReduceBusFactor(int n_ranks) {
  return 2.0 * (n_ranks - 1) / n_ranks;
}

// Warm-up rounds before every timed loop: map peers' memory, fault pages, settle caches.
inline constexpr int64_t kWarmupIterations = 3;

}  // namespace synk::bench
