#pragma once
// Internal: what the master sends every rank for one shared-variable collective.
#include <cstdint>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/byte_io.h"
#include "synk/core/reduce_op.h"
#include "synk/core/selection.h"
#include "synk/core/step/call_request.h"

namespace synk::detail {

enum class CollectiveKind : uint8_t {
  Broadcast,
  Scatter,
  Gather,
  AllGather,
  Reduce,
  AllReduce,
  SetValue,
  GetValue,
  Shapes
};

// "all_reduce", for messages.
const char* kindName(CollectiveKind kind);

struct VarRef {
  uint32_t model;
  uint32_t index;
};

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::Shapes;
  std::vector<VarRef> vars;
  ReduceOp op = ReduceOp::Sum;
  uint8_t in_place = 0;
  int32_t nd_up = 1;
  uint8_t native = 1;  // Backend::communicator(native)
  // The master knows every rank holds shapes[k] (the fast path): no shape exchange.
  uint8_t shapes_known = 0;
  int32_t rank = 0;               // set_value / get_value target
  std::vector<CallInput> values;  // scatter / set_value sources
  Selection batch;
  std::vector<Shape> shapes;  // broadcast: the master's; shapes_known: every rank's

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.kind, self.vars, self.op, self.in_place, self.nd_up, self.native, self.shapes_known,
       self.rank, self.values, self.batch, self.shapes);
  }
};

}  // namespace synk::detail
