#pragma once
// Element-wise kernels of the CUDA device, enqueued on `stream`. They reproduce core/host_kernels.h
// element for element: float16 and bfloat16 load to float, compute, and round to nearest even
// once per operation; max and min are std::max/std::min's ((a < b) ? b : a), so NaN handling
// matches too; integers wrap like the host's two's-complement arithmetic. Each launch is checked
// (SYNK_CUDA_CHECK on cudaGetLastError).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk::kernels {

// acc[i] = op(acc[i], x[i]); Avg accumulates like Sum. Throws InternalError for gather/none.
void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op,
                cudaStream_t stream);
// buffer[i] = buffer[i] * factor, factor cast to the compute type first (as the host does).
void scale(void* buffer, size_t count, DType dtype, double factor, cudaStream_t stream);
// buffer[i] = identity of op (host::fillIdentity's bytes, so bit-identical).
void fillIdentity(void* buffer, size_t count, DType dtype, ReduceOp op, cudaStream_t stream);

// Row i of dst = row rows[i] of src, row_bytes each; `rows` is in device memory. Moves 16, 8, 4
// or 1 bytes per thread, whatever the alignment of both buffers and row_bytes allows.
void gatherRows(void* dst, const void* src, size_t row_bytes, const int64_t* rows, size_t count,
                cudaStream_t stream);

}  // namespace synk::kernels
