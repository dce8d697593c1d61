#pragma once
// Which part of a reduction each rank does: the shared-memory collectives (shm_communicator.cc)
// and the host-staged pipeline of the cuda backend (cuda/staging/staged_pipeline.cc) split a buffer
// alike.
#include <algorithm>
#include <cstddef>
#include <utility>

namespace synk::shm_detail {

// Owned ranges start on cache-line multiples, so two ranks never write the same line.
inline constexpr size_t kLineBytes = 64;

// The elements [begin, end) that `rank` of `n` reduces: an even split of `count` elements whose
// boundaries fall on kLineBytes multiples (relative to the buffer start).
inline std::pair<size_t, size_t> ownedRange(size_t count, size_t elem_bytes, int rank, int n) {
  const size_t per_line = kLineBytes / elem_bytes;
  const size_t lines = (count + per_line - 1) / per_line;
  const size_t first = lines * static_cast<size_t>(rank) / static_cast<size_t>(n);
  const size_t last = lines * static_cast<size_t>(rank + 1) / static_cast<size_t>(n);
  return {std::min(count, first * per_line), std::min(count, last * per_line)};
}

}  // namespace synk::shm_detail
