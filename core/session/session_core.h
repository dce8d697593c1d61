#pragma once
// Internal: a session in one process. The master and every worker hold one. It owns the pieces a
// session is made of and wires them together; the public handles (core/session.h) go to the
// master side of one concern each, which checks what the master can know, builds a request and
// runs one step on every rank:
//
//   master side (core/session/master/)     every rank (core/step/)
//   SessionLifecycle   lifecycle.h         fork, backends, open/closed, runStep, teardown
//   ModelMaster        model_master.h      DistributeHandler (distribute.h)
//   CallMaster         call_master.h       CallHandler (call_exec.h)
//   LocalCall          local_call.h        none: Function::asLocal runs on the master alone
//   CollectiveMaster   collective_master.h CollectiveHandler (collective_exec.h)
//   DataMaster         data_master.h       DataStore (memory/data_store.h) maps the blobs
//   SyncMaster         sync_master.h       BarrierHandler, SynchronizeHandler (below)
//
// and the tables they share with the handlers: ModelTable (model_table.h: models, their
// variables' storage, function bindings), DataStore, UniformShapes (the collective fast path),
// RankResources (rank, group, device, heap, communicators). SessionCore itself is the only class
// the public handles befriend: it makes them and opens them for the masters.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "synk/core/backend.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/session.h"
#include "synk/core/session/master/call_master.h"
#include "synk/core/session/master/collective_master.h"
#include "synk/core/session/master/data_master.h"
#include "synk/core/session/master/lifecycle.h"
#include "synk/core/session/master/local_call.h"
#include "synk/core/session/master/model_master.h"
#include "synk/core/session/master/sync_master.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/session/uniform_shapes.h"
#include "synk/core/step/call_collectives.h"
#include "synk/core/step/call_exec.h"
#include "synk/core/step/collective_exec.h"
#include "synk/core/step/distribute.h"
#include "synk/core/step/ship_data.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

class DataImpl;

class SessionCore : public std::enable_shared_from_this<SessionCore> {
 public:
  SessionCore(const ForkOptions& options, BackendRegistry registry,
              std::shared_ptr<ModelLoader> loader, BackendFactory& factory);
  SessionCore(const SessionCore&) = delete;
  SessionCore& operator=(const SessionCore&) = delete;

  // ---- one concern each (see the table above)
  SessionLifecycle& lifecycle() { return lifecycle_; }
  ModelMaster& models() { return models_; }
  CallMaster& calls() { return calls_; }
  LocalCall& localCall() { return local_call_; }
  CollectiveMaster& collectives() { return collectives_; }
  DataMaster& data() { return data_; }
  SyncMaster& sync() { return sync_; }

  // ---- the handles' private side (only SessionCore is their friend)
  Model modelHandle(uint32_t id) { return Model(shared_from_this(), id); }
  Function functionHandle(uint32_t id) { return Function(shared_from_this(), id); }
  Data dataHandle(std::shared_ptr<DataImpl> impl) { return Data(std::move(impl)); }
  static DataImpl& dataImpl(const Data& data) { return data.impl(); }
  // Checks a handle belongs to this session; returns (model, variable index).
  std::pair<uint32_t, uint32_t> resolve(const Variable& variable, const std::string& what);

 private:
  std::shared_ptr<ModelLoader> loader_;
  // The tables handlers and master sides share (filled by lifecycle_ once the backend started).
  RankResources rank_;
  DataStore data_store_;
  ModelTable table_{rank_};
  UniformShapes uniform_shapes_;
  InCallCollectives call_collectives_{rank_};
  StepRunner steps_;

  // Every rank's side of a step: a handler per opcode.
  class BarrierHandler final : public StepHandler {
    StepResult run(ByteReader&, Waiter&) override { return {}; }
  } barrier_handler_;
  // Every rank waits until its device has finished what was issued so far.
  class SynchronizeHandler final : public StepHandler {
   public:
    explicit SynchronizeHandler(const RankResources& rank) : rank_(rank) {}
    StepResult run(ByteReader&, Waiter& waiter) override {
      rank_.device->synchronize(waiter);
      return {};
    }

   private:
    const RankResources& rank_;
  } synchronize_handler_{rank_};
  DistributeHandler distribute_handler_;
  CallHandler call_handler_{rank_, table_, call_collectives_};
  CollectiveHandler collective_handler_{rank_, table_, uniform_shapes_};
  ShipDataHandler ship_data_handler_{rank_, data_store_};

  // The master's side. The lifecycle is destroyed before the tables above (members go in reverse
  // order), so that closing at destruction can still free them.
  SessionLifecycle lifecycle_;
  ModelMaster models_{*this, table_, rank_, *loader_, call_collectives_};
  CallMaster calls_{*this, table_};
  LocalCall local_call_{*this, table_, rank_, call_collectives_};
  CollectiveMaster collectives_{*this, table_, uniform_shapes_};
  DataMaster data_{*this, data_store_};
  SyncMaster sync_{lifecycle_, steps_};
};

}  // namespace synk::detail
