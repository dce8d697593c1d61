#pragma once
// Internal: shared-variable collectives, the master's side: validate, build a CollectiveRequest
// (step/collective_request.h), then one step on every rank (step/collective_exec.h runs it
// there). Shapes every rank is known to hold (UniformShapes) travel in the request, so the
// ranks skip the shape exchange.
#include <optional>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/session.h"
#include "synk/core/step/collective_request.h"

namespace synk::detail {

class SessionCore;
class ModelTable;
class UniformShapes;
struct StepResult;

class CollectiveMaster {
 public:
  CollectiveMaster(SessionCore& core, const ModelTable& table, UniformShapes& shapes)
      : core_(core), table_(table), uniform_shapes_(shapes) {}

  // Whether a collective asked for with `requested` (unset: native where the session has it)
  // runs natively; asked for native where there is none, throws UsageError at once.
  bool resolveNative(std::optional<bool> requested);

  void broadcast(const std::vector<Variable>& vars, const std::vector<ArrayView>& values,
                 bool native);
  void scatter(const std::vector<Variable>& vars, const std::vector<Data>& values,
               const Selection& batch);
  std::vector<Array> gather(const std::vector<Variable>& vars, int nd_up, bool native);
  void allGather(const std::vector<Variable>& vars, bool native);
  std::vector<Array> reduce(const std::vector<Variable>& vars, ReduceOp op, bool in_place,
                            bool native);
  void allReduce(const std::vector<Variable>& vars, ReduceOp op, bool native);
  void setValue(int rank, const std::vector<Variable>& vars, const std::vector<Data>& values,
                const Selection& batch);
  std::vector<Array> getValue(int rank, const std::vector<Variable>& vars);
  std::vector<std::vector<Shape>> getShapes(const std::vector<Variable>& vars);

 private:
  // The request of this kind for these variables, each checked to belong to the session: the
  // one member request, reset (valid until the next requestFor).
  CollectiveRequest& requestFor(CollectiveKind kind, const std::vector<Variable>& vars);
  // The fast path's shapes for every variable of the request, if all are known.
  void useKnownShapes(CollectiveRequest& request);
  StepResult runCollective(const CollectiveRequest& request);

  SessionCore& core_;
  const ModelTable& table_;
  UniformShapes& uniform_shapes_;
  // Reused by every collective (the master issues one at a time).
  CollectiveRequest request_;
  ByteWriter payload_;
  std::string what_;
};

}  // namespace synk::detail
