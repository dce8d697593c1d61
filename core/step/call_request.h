#pragma once
// Internal: what the master sends every rank for one function call.
#include <cstdint>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/byte_io.h"
#include "synk/core/memory/blob.h"
#include "synk/core/selection.h"

namespace synk::detail {

struct CallInput {
  BlobRef blob;
  DType dtype = DType::Float32;
  Shape shape;
  uint8_t minibatch = 0;
  uint8_t device_resident = 0;
  uint64_t version = 0;  // of a device-resident Data: the ranks' copies follow it

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.blob, self.dtype, self.shape, self.minibatch, self.device_resident, self.version);
  }
};

// Update variables of at least this many bytes may get window update buffers (call_windows.cc).
constexpr size_t kWindowMinBytes = size_t{1} << 20;

struct CallRequest {
  uint32_t function = 0;
  std::vector<CallInput> inputs;  // in declaration order
  Selection batch;
  std::vector<Selection> batch_s;  // empty, one for every rank, or one per rank
  int32_t num_slices = 1;
  int64_t batch_rows = -1;      // rows of the batch when there are scattered inputs, else -1
  std::vector<uint8_t> wanted;  // per output: 1 = returned (output_subset); empty = all
  // 1: an unsliced call with an update variable of kWindowMinBytes or more on the master, so the
  // ranks agree on window update buffers (call_windows.cc). Decided here so every rank agrees.
  uint8_t windows = 0;

  bool wants(size_t output) const { return wanted.empty() || wanted[output] != 0; }

  // The batch_s selection of `rank` (All when none was given).
  Selection batchS(int rank) const {
    if (batch_s.empty()) return Selection::all();
    return batch_s.size() == 1 ? batch_s[0] : batch_s[static_cast<size_t>(rank)];
  }

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.function, self.inputs, self.batch, self.batch_s, self.num_slices, self.batch_rows,
       self.wanted, self.windows);
  }
};

}  // namespace synk::detail
