#pragma once
// Internal: one function call on one rank (see call_exec.cc for the three phases).
#include <string>
#include <vector>

#include "synk/core/process/control/exchange.h"
#include "synk/core/session/model_table.h"
#include "synk/core/session/rank_resources.h"
#include "synk/core/step/call_collectives.h"
#include "synk/core/step/call_request.h"
#include "synk/core/step/step_runner.h"

namespace synk::detail {

// A call's bookkeeping containers, owned by the handler and reused from call to call (a call's
// path allocates nothing for them once they have grown). Each call clears or overwrites every
// one before reading it: nothing carries over from the last call.
struct CallReuse {
  std::vector<int64_t> rank_rows;
  std::vector<TensorRef> broadcast_inputs;
  std::vector<int64_t> resident_rows;
  std::vector<Shape> slice_shapes;
  std::vector<Shape> acc_shapes;
  std::vector<std::vector<Shape>> gather_part_shapes;
  std::vector<int64_t> all_rows;
  std::vector<bool> contributes;
  std::vector<std::vector<Shape>> all_shapes;
  std::vector<Shape> agreed_shapes;
  std::vector<std::byte> inline_bytes;
  std::vector<std::vector<size_t>> inline_at;
  ByteWriter offer;  // this rank's part of the agreement exchange
  std::vector<WindowSpan> windows;
};

// The call step's handler: one CallExecution per call.
class CallHandler final : public StepHandler {
 public:
  CallHandler(const RankResources& rank, ModelTable& table, InCallCollectives& collectives)
      : rank_(rank), table_(table), collectives_(collectives) {}
  StepResult run(ByteReader& payload, Waiter& waiter) override;

 private:
  const RankResources& rank_;
  ModelTable& table_;
  InCallCollectives& collectives_;
  CallRequest request_;  // read into every step: its vectors keep their capacity
  CallReuse reuse_;
};

class CallExecution {
 public:
  CallExecution(const RankResources& rank, ModelTable& table, InCallCollectives& collectives,
                const CallRequest& request, CallReuse& reuse, Waiter& waiter);
  // The status every rank agreed on, and on the master the outputs (declaration order).
  StepResult run();

  // CallFrame::allocate of the running slice (CallFrame::output has checked the request).
  void* allocateOutput(int index, const Shape& shape);

 private:
  class Frame final : public CallFrame {
   public:
    explicit Frame(CallExecution& call) : CallFrame(call.spec_.outputs), call_(call) {}

   protected:
    void* allocate(int index, const Shape& shape) override {
      return call_.allocateOutput(index, shape);
    }

   private:
    CallExecution& call_;
  };

  std::string where() const;
  void plan();
  // call_windows.cc: every rank, whether or not its plan succeeded (`ok`), before anything else
  // of the call can differ between ranks. False where some rank's plan failed (then no rank
  // computes: the agreement reports that rank's error everywhere).
  bool agreeOnWindows(bool ok);
  void computeSlices();
  void runSlice(const RowRange& local);
  void accumulateSlice(int64_t slice_rows);
  void combine(DeviceBuffer& acc, DeviceBuffer& slice, int64_t count, DType dtype, ReduceOp op,
               double weight, bool first);
  TensorRef scatteredInput(size_t i, const RowRange& local);
  // A device-resident Data input: rows from the rank's device copy (a pointer into it, or one
  // gather kernel for an index batch).
  TensorRef residentInput(size_t i, const RowRange& local);
  std::byte* residentCopy(const CallInput& in);
  void prepareBroadcastInputs();
  TensorRef sliceableRead(size_t j, const RowRange& local);
  const VariableStorage& readStorage(size_t j) const;
  // An output that travels in the agreement exchange when small: element-wise and wanted.
  bool inlineable(size_t o) const {
    return isElementwise(binding_.output_ops[o]) && request_.wants(o);
  }
  // Bytes of output o with `shape` (its declared dtype).
  size_t outputBytes(size_t o, const Shape& shape) const;
  void offerInlineOutputs(ByteWriter& out, bool ok);
  Array reduceInline(size_t o);
  Status agree(ExchangeResult& all);
  // What `rank`'s output weighs in an avg.
  double avgShare(int rank) const;
  void applyUpdates();
  void reduceOutputs();
  void gatherOutput(size_t o, Communicator& comm);
  Array toHost(const DeviceBuffer& buffer, DType dtype, const Shape& shape);

  const RankResources& rank_;
  InCallCollectives& collectives_;
  const CallRequest& request_;
  ByteWriter& offer_;
  Waiter& waiter_;
  const FunctionBinding& binding_;
  ModelState& model_;
  const FunctionSpec& spec_;
  FunctionScratch& scratch_;
  Device& device_;
  StepResult result_;

  // This rank's share: positions [mine_.begin, mine_.end) of the batch (scattered inputs), or
  // rows_ rows of the sliceable variables, split into slices_ slices.
  bool row_based_ = false;
  RowRange mine_;
  int64_t rows_ = 0;
  int slices_ = 1;
  // Every rank's rows (splitRows of the batch), for the model's row collectives; empty when the
  // call has no scattered inputs or is sliced (CallFrame::rank_rows).
  std::vector<int64_t>& rank_rows_;
  Selection batch_s_;
  bool computed_ = false;
  bool staged_ = false;
  // A queued device copy still reads host memory (a Data blob or this rank's staging rows).
  bool host_reads_pending_ = false;
  int slice_index_ = 0;
  size_t slice_count_ = 0;
  std::vector<TensorRef>& broadcast_inputs_;
  std::vector<int64_t>& resident_rows_;  // source rows of an index batch, for gatherRows
  std::vector<Shape>& slice_shapes_;
  std::vector<Shape>& acc_shapes_;
  std::vector<std::vector<Shape>>& gather_part_shapes_;

  // Agreed by every rank after the compute phase.
  std::vector<int64_t>& all_rows_;
  // Whether a rank's outputs take part in the reduction (it had rows, or nobody had any).
  std::vector<bool>& contributes_;
  int contributing_ = 0;
  std::vector<std::vector<Shape>>& all_shapes_;
  std::vector<Shape>& agreed_shapes_;
  int64_t total_rows_ = 0;
  // Element-wise outputs this small (all of them, per rank) travel in the agreement exchange.
  static constexpr size_t kInlineOutputBytes = 4096;
  bool inline_ = false;
  // Every rank's inline outputs, copied out of the exchange area (a later barrier of this step
  // may reuse it): inline_at_[rank][output] is an offset into inline_bytes_.
  std::vector<std::byte>& inline_bytes_;
  std::vector<std::vector<size_t>>& inline_at_;
  std::vector<WindowSpan>& windows_;  // this call's window update buffers
};

}  // namespace synk::detail
