#pragma once
// Internal: a shared-variable collective on one rank (every rank, the master included). The
// collectives that need every rank's shapes exchange them first (the fingerprint: ranks may hold
// different shapes, and a collective on unequal shapes must be an exact result or a clear error,
// never silently wrong), unless the master knew them (the fast path,
// core/session/uniform_shapes.h); then each runs the backend's communicator.
#include <vector>

#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/session/uniform_shapes.h"
#include "synk/core/step/collective_request.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

class CollectiveHandler final : public StepHandler {
 public:
  CollectiveHandler(const RankResources& rank, ModelTable& table, UniformShapes& shapes)
      : rank_(rank), table_(table), shapes_(shapes) {}
  StepResult run(ByteReader& payload, Waiter& waiter) override;
  // Device memory back to the device (before the device goes away).
  void release() noexcept { result_buffer_ = DeviceBuffer(); }
  void abandon() noexcept { (void)new auto(std::move(result_buffer_)); }

 private:
  const RankResources& rank_;
  ModelTable& table_;
  UniformShapes& shapes_;
  DeviceBuffer result_buffer_;  // master: reduce and gather results, reused
  // Read into and reused every step: a small collective's path allocates nothing once grown.
  CollectiveRequest request_;
  std::vector<AllReduceArgs> list_;
};

class CollectiveExecution {
 public:
  // `list` is the handler's scratch for the all_reduce's arguments.
  CollectiveExecution(const RankResources& rank, ModelTable& table, UniformShapes& shapes,
                      DeviceBuffer& result_buffer, const CollectiveRequest& request,
                      std::vector<AllReduceArgs>& list, Waiter& waiter)
      : rank_(rank),
        table_(table),
        shapes_(shapes),
        result_buffer_(result_buffer),
        request_(request),
        waiter_(waiter),
        device_(*rank.device),
        list_(list) {}

  // The status every rank agreed on; on the master the values that go back to the caller.
  StepResult run();

 private:
  using RankShapes = std::vector<Shape>;  // one per rank

  VariableStorage& var(size_t k) {
    return table_.storage(request_.vars[k].model, request_.vars[k].index);
  }
  const std::string& varName(size_t k) {
    return table_.variableSpec(request_.vars[k].model, request_.vars[k].index).name;
  }
  Communicator& comm() { return rank_.communicator(request_.native != 0); }

  void broadcast();
  // scatter: every rank takes its share of the batch; set_value: the target takes the batch.
  void takeRows();
  void shaped();
  bool keepsShapes() const;
  void checkOwnShapes();
  void knownShapes(std::vector<RankShapes>& shapes);
  Status exchangeShapes(std::vector<RankShapes>& shapes);
  Status checkShapes(size_t k, const RankShapes& shapes);
  void allReduce();
  void runOne(size_t k, const RankShapes& shapes);
  Array toHost(const void* data, DType dtype, const Shape& shape);

  const RankResources& rank_;
  ModelTable& table_;
  UniformShapes& shapes_;
  DeviceBuffer& result_buffer_;
  const CollectiveRequest& request_;
  Waiter& waiter_;
  Device& device_;
  StepResult result_;
  bool copied_to_host_ = false;
  std::vector<AllReduceArgs>& list_;
};

}  // namespace synk::detail
