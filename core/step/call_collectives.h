#pragma once
// Internal: the collectives a model runs during one of its calls (core/model_loader.h
// CallCollectives), on the session's native communicator (host-staged where ranks share a GPU) with
// the running step's Waiter (its deadline, the abort word). CallExecution opens a Scope around each
// call of the model; outside one, all_reduce is a UsageError. Function::asLocal opens a local
// Scope: the master alone holds the whole batch, so a collective over "every rank" is over itself
// and leaves the buffer as it is (an all_gather copies send to recv).
#include <vector>

#include "synk/core/communicator.h"
#include "synk/core/model_loader.h"

namespace synk {
class Waiter;
}

namespace synk::detail {

struct RankResources;

// Memory of one of the running call's window update buffers (call_windows.cc): the update's
// bytes, which may be fewer than its window's.
using WindowSpan = Communicator::Window;

class InCallCollectives final : public CallCollectives {
 public:
  explicit InCallCollectives(const RankResources& rank) : rank_(rank) {}
  // The running call's window update buffers (null: the call has none). In a call with windows
  // every all-reduce runs where they are (AllReduceArgs::window_call), those wholly inside one
  // in its window (in_window); a buffer in any other window ends the session (the agreement
  // keeps the buffers a model may write out of windows it did not agree on).
  void setWindows(const std::vector<WindowSpan>* windows) { windows_ = windows; }
  void allReduce(void* buffer, size_t count, DType dtype, ReduceOp op) override;
  void allGather(const void* send, void* recv, size_t count, DType dtype) override;

  class Scope {
   public:
    Scope(InCallCollectives& owner, Waiter& waiter) : owner_(owner) { owner_.waiter_ = &waiter; }
    // The one-process reference (asLocal).
    explicit Scope(InCallCollectives& owner) : owner_(owner) { owner_.local_ = true; }
    ~Scope() {
      owner_.waiter_ = nullptr;
      owner_.local_ = false;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    InCallCollectives& owner_;
  };

 private:
  bool inWindow(const void* buffer, size_t bytes) const;

  const RankResources& rank_;
  const std::vector<WindowSpan>* windows_ = nullptr;
  Waiter* waiter_ = nullptr;
  bool local_ = false;
};

}  // namespace synk::detail
