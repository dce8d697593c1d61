#include "synk/core/reduce_op.h"

#include "synk/core/error.h"

namespace synk {
namespace {
constexpr const char* kNames[] = {"avg", "sum", "prod", "max", "min", "gather", "none"};
}

const char* reduceOpName(ReduceOp op) {
  return kNames[static_cast<int>(op)];
}

ReduceOp parseReduceOp(std::string_view name, std::string_view where) {
  for (int i = 0; i < 7; ++i) {
    if (name == kNames[i]) return static_cast<ReduceOp>(i);
  }
  throw InvalidArgument(str(where, ": unknown reduce op '", name,
                            "' (valid: avg, sum, prod, max, min, gather, none)"));
}

bool isElementwise(ReduceOp op) {
  return op != ReduceOp::Gather && op != ReduceOp::None;
}

bool isCollectiveOp(ReduceOp op, DType dtype) {
  return isElementwise(op) && (op != ReduceOp::Avg || isFloating(dtype));
}

void checkCollectiveOp(ReduceOp op, DType dtype, std::string_view where) {
  if (!isElementwise(op)) {
    throw InvalidArgument(str(where, ": reduce op '", reduceOpName(op),
                              "' is not a collective op (valid: avg, sum, prod, max, min)"));
  }
  if (op == ReduceOp::Avg && !isFloating(dtype)) {
    throw InvalidArgument(
        str(where, ": 'avg' needs a floating-point dtype, got ", dtypeName(dtype), " (use 'sum')"));
  }
}

}  // namespace synk
