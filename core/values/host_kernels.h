#pragma once
// Element-wise loops on host memory for every dtype: casts, reductions, scaling. float16 and
// bfloat16 compute in float32 and round once per operation. These are the CPU "device kernels"
// and the building blocks of the shared-memory collectives.
#include <cstddef>

#include "synk/core/dtype.h"
#include "synk/core/reduce_op.h"

namespace synk::host {

void cast(const void* src, DType from, void* dst, DType to, size_t count);
// acc[i] = op(acc[i], x[i]); Avg accumulates like Sum. op must be element-wise.
void accumulate(void* acc, const void* x, size_t count, DType dtype, ReduceOp op);
// dst[i] = src[i] * factor (floating dtypes only); dst may equal src.
void scaleCopy(void* dst, const void* src, size_t count, DType dtype, double factor);
// The identity of op: 0 for sum/avg, 1 for prod, the lowest value for max, the highest for min.
void fillIdentity(void* buf, size_t count, DType dtype, ReduceOp op);
double loadAsDouble(const void* p, DType dtype);
void storeFromDouble(void* p, DType dtype, double value);

}  // namespace synk::host
