#pragma once
// Internal: function calls, the master's side (Function::operator()). callFunction validates
// everything the master can know before any rank moves, then runs the call step (step/call_exec.h
// runs it on every rank) and returns the master's reduced outputs.
#include <cstdint>
#include <vector>

#include "synk/core/byte_io.h"
#include "synk/core/session.h"
#include "synk/core/step/call_request.h"

namespace synk::detail {

class SessionCore;
class ModelTable;
class DataImpl;

class CallMaster {
 public:
  CallMaster(SessionCore& core, ModelTable& table) : core_(core), table_(table) {}

  std::vector<Array> callFunction(uint32_t id, const std::vector<Data>& inputs,
                                  const CallOptions& options);

 private:
  SessionCore& core_;
  ModelTable& table_;
  // Refilled by every call (the master issues one at a time): a call's path allocates nothing
  // for them once they have grown.
  CallRequest request_;
  ByteWriter payload_;
  std::vector<const DataImpl*> data_;
};

}  // namespace synk::detail
