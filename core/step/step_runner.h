#pragma once
// Internal: the step protocol (core/step/command.h) on one rank. The master writes a command
// (opcode and payload) into the control block; every rank passes CommandStart, runs the handler
// registered for the opcode (the same code everywhere: SPMD), writes the handler's Status into its
// slot and passes CommandEnd; the master then reads every rank's status and raises the first
// failure. Handlers return what the master's caller gets (reduced outputs, gathered values): the
// runner hands the master's result back from run().
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synk/core/array.h"
#include "synk/core/byte_io.h"
#include "synk/core/memory/blob.h"
#include "synk/core/phase_clock.h"
#include "synk/core/shm_segment.h"
#include "synk/core/step/command.h"
#include "synk/core/waiter.h"

namespace synk {
class ProcessGroup;
}  // namespace synk

namespace synk::detail {

class DataStore;
class UniformShapes;

// What a handler returns on one rank. Only the master's arrays and shapes are used.
struct StepResult {
  Status status;
  std::vector<Array> arrays;               // outputs, reduced or gathered values
  std::vector<std::vector<Shape>> shapes;  // get_shapes: [variable][rank]
};

// The work of one opcode on one rank. run() reports a failure every rank agrees on through the
// status (every rank still passes every barrier of the step); an exception it lets escape is
// fatal (its rank may have skipped barriers): the session aborts.
class StepHandler {
 public:
  virtual ~StepHandler() = default;
  virtual StepResult run(ByteReader& payload, Waiter& waiter) = 0;
};

class StepRunner {
 public:
  // `fatal` ends the session after a failure inside a step (master only; it must not throw).
  // `shape_generation` is this rank's count of variable shape changes, sent with each status.
  StepRunner(DataStore& data, UniformShapes& shapes, const uint64_t& shape_generation,
             std::function<void(const std::string& reason)> fatal);

  // The group to run steps on (the master's after fork; a worker's in the worker).
  void attach(ProcessGroup& group) {
    group_ = &group;
    step_waiter_.reset();  // it watched the old group's control block
  }
  // The handler of `opcode` on this rank; it must outlive the runner's use of it.
  void handle(Opcode opcode, StepHandler& handler);

  // Master: runs one step on every rank (its own share included) and returns the master's result,
  // or throws the first failing rank's error; a fatal failure aborts the session first.
  //
  // post = true posts the step: every rank runs the handler, but nobody waits at its end and no
  // status is reported; the master returns as soon as its own share is done, and the next step's
  // start barrier is where it meets the workers again. For handlers that can only fail fatally
  // (an all_reduce on shapes the master knew: its work is queued on each rank's device anyway):
  // a posted handler that returns a failed status aborts the session, and a rank that fails or
  // dies in one is reported by the next step (as "after <the posted step>"). A payload too large
  // for the control block is never posted; over several nodes a ship-data step of its own carries
  // it to the other nodes first (shipLargePayload).
  StepResult run(Opcode opcode, const ByteWriter& payload, const std::string& what,
                 bool post = false);
  // Worker: runs every step the master issues, until Quit.
  void serve();
  // Master: tells the workers to quit (they leave without a status).
  void quit();
  // Master, with ForkOptions::step_times: every rank's times in the last step that ended with
  // every rank (a posted step publishes none), waiting until each rank has published them
  // (right after that step's end) and throwing Timeout past `timeout`; empty if no step has.
  std::vector<StepTimes> lastStepTimes(std::chrono::milliseconds timeout);

 private:
  // Into the control block's half `half`; returns whether the step is posted (post, and the
  // payload fits the control block).
  bool writeCommand(Opcode opcode, const ByteWriter& payload, size_t half, bool post);
  // A command's frame into `out`: the blob releases it carries, then the payload; returns how
  // many releases.
  static size_t frame(ByteWriter& out, const std::vector<uint64_t>& releases,
                      const ByteWriter& payload);
  // Whether `payload`, with the pending releases, fits the control block.
  bool fitsControlBlock(const ByteWriter& payload) const;
  // Copies `framed` into the master's payload blob (a new generation when it grows).
  BlobRef writePayloadBlob(const ByteWriter& framed);
  // Over several nodes, a payload too large for the control block: its frame (the pending
  // releases, then the payload) into the payload blob, which a ship-data step of its own
  // (core/step/ship_data.h) copies into every other node's shared memory under the same name,
  // so that their ranks read it there; the step's command then refers to it (shipped_payload_).
  // `what` names the step the payload is for.
  void shipLargePayload(const ByteWriter& payload, const std::string& what);
  // After a step's CommandEnd: this rank's times of the step that started at `start_epoch`.
  void publishStepTimes(uint64_t start_epoch);
  ByteReader readCommand(Opcode& opcode, size_t half, bool& posted);
  StepResult execute(Opcode opcode, ByteReader& payload, Waiter& waiter);
  void writeStatus(const Status& status);
  // The waiter of a step starting now, described by `what`.
  Waiter& stepWaiter(const std::string& what);
  void throwStatuses();

  DataStore& data_;
  UniformShapes& shapes_;
  const uint64_t& shape_generation_;
  std::function<void(const std::string&)> fatal_;
  ProcessGroup* group_ = nullptr;
  std::array<StepHandler*, 8> handlers_{};
  // Payloads too large for the control block travel in a blob of the master's.
  std::unique_ptr<ShmSegment> payload_blob_;
  uint64_t payload_blob_id_ = 0;
  uint64_t payload_blob_generation_ = 0;
  std::vector<std::byte> blob_copy_;  // a large payload, copied out of its blob
  // Master: a payload shipped for the next command (run()): its blob, the frame's bytes and how
  // many of the pending releases the frame holds.
  struct ShippedPayload {
    BlobRef ref;
    uint64_t used = 0;
    size_t releases = 0;
  };
  std::optional<ShippedPayload> shipped_payload_;
  bool shipping_ = false;  // master: inside shipLargePayload's ship step
  ByteWriter framed_;      // master: the command being written, reused
  // Every step's waiter, re-armed for each (stepWaiter): no allocation for its description.
  std::optional<Waiter> step_waiter_;
  // Master: the last posted step, until a later step completes (every rank then started it, so
  // every rank had finished the posted one).
  std::string posted_;
  uint64_t timed_epoch_ = 0;  // master: the last step whose times every rank publishes
};

// The name of a step in messages, built once per opcode (a step must not pay for formatting).
const std::string& stepName(Opcode opcode);

}  // namespace synk::detail
