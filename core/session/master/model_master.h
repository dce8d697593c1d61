#pragma once
// Internal: models, functions and variables, the master's side: loading a model (its instance
// and variables on the master), binding a function, distributing both to every rank
// (step/distribute.h runs it there), the lookups every handle goes through, and the master's copy
// of a variable. Every lookup raises once the session closed: handles outlive the session, its
// models do not.
#include <cstdint>
#include <string>
#include <vector>

#include "synk/core/model_loader.h"
#include "synk/core/session.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"

namespace synk::detail {

class SessionCore;
class InCallCollectives;

class ModelMaster {
 public:
  ModelMaster(SessionCore& core, ModelTable& table, const RankResources& rank, ModelLoader& loader,
              InCallCollectives& call_collectives)
      : core_(core),
        table_(table),
        rank_(rank),
        loader_(loader),
        call_collectives_(call_collectives) {}

  Model load(const std::string& path, const ModelOptions& options);
  Function makeFunction(uint32_t model, const std::string& name, const FunctionOptions& options);
  // Every model and function not yet on every rank, one step each (a model whose creation fails
  // on a rank is dropped alone: PluginError after the others went out).
  void distribute();

  ModelState& modelState(uint32_t id);
  const FunctionBinding& binding(uint32_t id);
  const FunctionSpec& functionSpec(uint32_t id);
  VariableStorage& storage(uint32_t model, uint32_t index);
  const VariableSpec& variableSpec(uint32_t model, uint32_t index);

  // Master's copy of a variable, to host.
  Array readLocalVariable(uint32_t model, uint32_t index);
  void writeLocalVariable(uint32_t model, uint32_t index, const ArrayView& value, bool force_cast);
  // Sets the master's copy (no mirrored check: broadcast uses it).
  void setStorage(uint32_t model, uint32_t index, const ArrayView& value, bool force_cast);

 private:
  // One distribute step for these models and functions.
  void runDistribute(const std::vector<uint32_t>& models, const std::vector<uint32_t>& functions);

  SessionCore& core_;
  ModelTable& table_;
  const RankResources& rank_;
  ModelLoader& loader_;
  InCallCollectives& call_collectives_;
};

}  // namespace synk::detail
