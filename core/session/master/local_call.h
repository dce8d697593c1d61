#pragma once
// Internal: Function::asLocal. The master alone runs a function on whole host arrays and updates
// its own variables, like a plain single-process call (Synkhronos' as_theano): no step, no other
// rank. The reference that tests compare distributed results with. (A class and file apart from
// CallMaster: merged into call_master.cc it made GCC stop inlining the payload's vector growth
// there, +0.6 % instructions per call in scripts/callgrind-step-cost.)
#include <cstdint>
#include <vector>

#include "synk/core/session.h"

namespace synk::detail {

class SessionCore;
class ModelTable;
class InCallCollectives;
struct RankResources;

class LocalCall {
 public:
  LocalCall(SessionCore& core, ModelTable& table, const RankResources& rank,
            InCallCollectives& call_collectives)
      : core_(core), table_(table), rank_(rank), call_collectives_(call_collectives) {}

  std::vector<Array> run(uint32_t id, const std::vector<ArrayView>& inputs);

 private:
  SessionCore& core_;
  ModelTable& table_;
  const RankResources& rank_;
  InCallCollectives& call_collectives_;
};

}  // namespace synk::detail
