#pragma once
// synk's element types and reduce ops in NCCL's terms.
#include <nccl.h>

#include "synk/core/dtype.h"
#include "synk/core/error.h"
#include "synk/core/reduce_op.h"

namespace synk {

inline ncclDataType_t ncclTypeOf(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Int32:
      return ncclInt32;
    case DType::Int64:
      return ncclInt64;
    case DType::UInt8:
      return ncclUint8;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
  }
  throw InvalidArgument(str("no NCCL type for dtype code ", static_cast<int>(dtype)));
}

// avg is ncclAvg: for floating types NCCL pre-multiplies each contribution by 1/n inside the same
// kernel (no extra pass over the buffer). With n a power of two that equals sum-then-scale bit
// for bit (barring overflow or subnormals); otherwise it rounds every input, so the communicator
// uses ncclSum and one scaling pass then (nccl_communicator.cc).
inline ncclRedOp_t ncclOpOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Prod:
      return ncclProd;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Avg:
      return ncclAvg;
    default:
      break;
  }
  throw InvalidArgument(str("reduce op '", reduceOpName(op), "' is not a NCCL reduction"));
}

}  // namespace synk
