#pragma once
// Internal: a rank's heap and backend (its device and communicators) in one process. Started after
// the fork on every rank, it fills the tables handlers use from them (RankResources, the
// DataStore's mapping); released, it frees the tables that hold device memory and plugin
// instances (ModelTable, the collective handler's buffers) before the backend itself goes. After
// a failure the backend's abort runs on a thread of its own; a copy of the master made by fork()
// leaks all of it. SessionLifecycle owns one and decides when each of these happens.
#include <memory>
#include <thread>

#include "synk/core/backend.h"
#include "synk/core/session.h"
#include "synk/core/shm_heap.h"

namespace synk {
class ProcessGroup;
}  // namespace synk

namespace synk::detail {

class CollectiveHandler;
class DataStore;
class ModelTable;
struct RankResources;

class RankBackend {
 public:
  // The tables it fills and frees (SessionCore's).
  struct Tables {
    RankResources& rank;
    DataStore& data;
    ModelTable& models;
    CollectiveHandler& collective_handler;
  };

  explicit RankBackend(Tables tables) : tables_(tables) {}
  RankBackend(const RankBackend&) = delete;
  RankBackend& operator=(const RankBackend&) = delete;

  // The heap, the backend, the tables filled from them; then the startup barrier with every rank.
  void start(const ForkOptions& options, BackendFactory& factory, ProcessGroup& group);
  // Device memory and plugin instances go back before the device itself goes away; then the
  // backend and the heap.
  void release() noexcept;
  // After a failure: the backend's abort on a thread of its own (an NCCL abort takes ~0.5 s per
  // communicator), or here if no thread can be had. joinAbort() waits for it.
  void startAbort() noexcept;
  void joinAbort() noexcept;
  // In a copy of the master made by fork(): lets go of everything without freeing it (the device,
  // the plugin instances and the shared memory are the master's); forgets the abort's thread.
  void abandon() noexcept;

  // Null before start() and after release().
  Backend* get() const { return backend_.get(); }

 private:
  Tables tables_;
  std::unique_ptr<ShmHeap> heap_;
  std::unique_ptr<Backend> backend_;
  std::thread abort_;  // master only: the backend's abort, started by startAbort
  bool abandoned_ = false;
};

}  // namespace synk::detail
