#pragma once
// Internal: distribute, the step that replicates models and function bindings on every rank. The
// master loaded each model and bound each function; every other rank loads the same file with the
// same options, checks that it declares what the master's copy declares, creates its instance and
// its variables' storage, and then every rank takes the master's variable values (a broadcast).
// A model whose creation fails on some rank fails the step on every rank, which all undo it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "synk/core/session/model_table.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

struct DistributedModel {
  uint32_t id = 0;
  std::string path;  // the file the master loaded
  ModelOptions options;
  std::vector<std::byte> signature;  // what ranks must agree on: specSignature()
  std::vector<Shape> shapes;         // the master's variable shapes

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.id, self.path, self.options, self.signature, self.shapes);
  }
};

struct DistributeRequest {
  std::vector<DistributedModel> models;
  std::vector<FunctionBinding> functions;

  template <typename Io, typename Self>
  static void fields(Io& io, Self& self) {
    io(self.models, self.functions);
  }
};

// Master: the request that distributes these models and functions of `table`.
DistributeRequest distributeRequest(ModelTable& table, const std::vector<uint32_t>& models,
                                    const std::vector<uint32_t>& functions);

class DistributeHandler final : public StepHandler {
 public:
  // Models load through `loader`; instances get `collectives` as their in-call service.
  DistributeHandler(const RankResources& rank, ModelTable& table, ModelLoader& loader,
                    CallCollectives& collectives)
      : rank_(rank), table_(table), loader_(loader), collectives_(collectives) {}
  StepResult run(ByteReader& payload, Waiter& waiter) override;

 private:
  // A worker: loads, checks and instantiates the master's models and bindings.
  void install(const DistributeRequest& request);

  const RankResources& rank_;
  ModelTable& table_;
  ModelLoader& loader_;
  CallCollectives& collectives_;
};

}  // namespace synk::detail
