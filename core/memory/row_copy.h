#pragma once
// Internal: rows of a Data taken by a rank — a function's scattered input, a scatter or set_value
// into a variable. One logic for all of them: contiguous rows are one copy (or, on the host
// device, read in place); an index list is gathered row by row on the host first.
#include <cstddef>
#include <cstdint>

#include "synk/core/device.h"
#include "synk/core/memory/heap_buffer.h"
#include "synk/core/selection.h"

namespace synk::detail {

// The rows at positions [first, first + count) of `batch`, in an array of rows of `row_bytes`
// starting at `base` whose row 0 is row `offset` of the batch's numbering (a minibatch Data holds
// the batch's rows only, from its first).
struct RowSource {
  const std::byte* base = nullptr;
  size_t row_bytes = 0;
  const Selection* batch = nullptr;
  int64_t first = 0;
  int64_t count = 0;
  int64_t offset = 0;

  size_t bytes() const { return static_cast<size_t>(count) * row_bytes; }
  bool contiguous() const { return batch->isContiguous(); }
  // Contiguous selections: where the rows start.
  const std::byte* rows() const {
    return base + static_cast<size_t>(batch->rowAt(first) - offset) * row_bytes;
  }
  // Copies the rows one after the other into host memory at `out`.
  void gatherTo(std::byte* out) const;
};

// Copies `source`'s rows into device memory at `dst`: contiguous rows with one copy; an index list
// gathered on the host first, straight into `dst` on a host device, else into `staging` (grown on
// the rank's `heap`) and then copied. Returns whether a queued copy still reads host memory (the
// Data, or `staging`): then the device must be synchronised before either changes.
bool copyRows(Device& device, ShmHeap& heap, HeapBuffer& staging, void* dst,
              const RowSource& source);

}  // namespace synk::detail
