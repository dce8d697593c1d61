#pragma once
// Reduction operators for function outputs, updates and shared-variable collectives.
#include <string>
#include <string_view>

#include "synk/core/dtype.h"

namespace synk {

// avg/sum/prod/max/min reduce element-wise; gather concatenates along axis 0 in rank order;
// none keeps the master's own value. Collectives accept the first five only.
enum class ReduceOp { Avg, Sum, Prod, Max, Min, Gather, None };

const char* reduceOpName(ReduceOp op);
// Accepts "avg", "sum", "prod", "max", "min", "gather", "none"; throws InvalidArgument naming
// `where` and the valid names otherwise.
ReduceOp parseReduceOp(std::string_view name, std::string_view where = "reduce op");
bool isElementwise(ReduceOp op);
// Throws InvalidArgument if op cannot be used by a collective (gather, none) or avg is asked of
// an integer dtype. `where` names the call and variable for the message.
void checkCollectiveOp(ReduceOp op, DType dtype, std::string_view where);
// What checkCollectiveOp accepts, without building a message (for the call path).
bool isCollectiveOp(ReduceOp op, DType dtype);

}  // namespace synk
