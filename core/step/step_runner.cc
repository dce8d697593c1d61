#include "synk/core/step/step_runner.h"

#include <cstring>
#include <iterator>
#include <thread>
#include <utility>

#include <boost/scope_exit.hpp>

#include "synk/core/error.h"
#include "synk/core/memory/data_store.h"
#include "synk/core/phase_clock.h"
#include "synk/core/process_group.h"
#include "synk/core/session/uniform_shapes.h"
#include "synk/core/step/ship_data.h"

namespace synk::detail {

const std::string& stepName(Opcode opcode) {
  static const std::string kNames[] = {"step 'unknown'",     "step 'quit'",     "step 'barrier'",
                                       "step 'distribute'",  "step 'call'",     "step 'collective'",
                                       "step 'synchronize'", "step 'ship data'"};
  const auto index = static_cast<size_t>(opcode);
  return kNames[index < std::size(kNames) ? index : 0];
}

StepRunner::StepRunner(DataStore& data, UniformShapes& shapes, const uint64_t& shape_generation,
                       std::function<void(const std::string& reason)> fatal)
    : data_(data), shapes_(shapes), shape_generation_(shape_generation), fatal_(std::move(fatal)) {}

void StepRunner::handle(Opcode opcode, StepHandler& handler) {
  handlers_.at(static_cast<size_t>(opcode)) = &handler;
}

StepResult StepRunner::execute(Opcode opcode, ByteReader& payload, Waiter& waiter) {
  const auto index = static_cast<size_t>(opcode);
  StepHandler* handler = index < handlers_.size() ? handlers_[index] : nullptr;
  if (!handler) throw InternalError(str("unknown opcode ", index));
  return handler->run(payload, waiter);
}

Waiter& StepRunner::stepWaiter(const std::string& what) {
  if (!step_waiter_) {
    step_waiter_.emplace(group_->commandWaiter(what));
  } else {
    step_waiter_->rearm(group_->commandDeadline(), what);
  }
  return *step_waiter_;
}

void StepRunner::writeStatus(const Status& status) {
  RankSlot& slot = group_->control().slot(group_->rank());
  slot.status = static_cast<int32_t>(status.kind);
  slot.shape_generation = shape_generation_;
  storeMessage(slot.message, status.message);
}

size_t StepRunner::frame(ByteWriter& out, const std::vector<uint64_t>& releases,
                         const ByteWriter& payload) {
  out.clear();
  out.putVector(releases);
  out.append(payload.data(), payload.size());
  return releases.size();
}

bool StepRunner::fitsControlBlock(const ByteWriter& payload) const {
  // frame()'s size with the pending releases, without building it.
  const size_t releases = ByteWriter::vectorBytes<uint64_t>(data_.pendingReleases().size());
  return sizeof(PayloadHeader) + releases + payload.size() <= kCommandBytes;
}

BlobRef StepRunner::writePayloadBlob(const ByteWriter& framed) {
  if (!payload_blob_ || payload_blob_->size() < framed.size()) {
    if (payload_blob_) ShmSegment::remove(payload_blob_->name());
    if (!payload_blob_id_) payload_blob_id_ = data_.nextBlobId();
    ++payload_blob_generation_;
    payload_blob_ = std::make_unique<ShmSegment>(ShmSegment::create(
        blobName(group_->shmPrefix(), payload_blob_id_, payload_blob_generation_),
        framed.size() * 2, "command arguments"));
  }
  std::memcpy(payload_blob_->data(), framed.data(), framed.size());
  return {payload_blob_id_, payload_blob_generation_, payload_blob_->size()};
}

void StepRunner::shipLargePayload(const ByteWriter& payload, const std::string& what) {
  // The blob holds the whole frame, the pending releases included (the command that names it
  // sends them); the ship step's own command carries none, so it always fits.
  ByteWriter framed;
  const size_t releases = frame(framed, data_.pendingReleases(), payload);
  const ShippedPayload shipped{writePayloadBlob(framed), framed.size(), releases};
  ShipRequest request;
  request.blobs.push_back(shipped.ref);
  request.lengths.push_back(shipped.used);  // not the blob's spare room
  ByteWriter ship;
  ship.write(request);
  {
    // While the ship step runs (its command carries no releases, and ships nothing itself).
    shipping_ = true;
    BOOST_SCOPE_EXIT_ALL(&, this) {
      shipping_ = false;
    };
    run(Opcode::ShipData, ship, str(what, " (shipping its arguments to the other nodes)"));
  }
  shipped_payload_ = shipped;
}

bool StepRunner::writeCommand(Opcode opcode, const ByteWriter& payload, size_t half, bool post) {
  ControlBlock& cb = group_->control();
  // A payload shipped to the other nodes by the step before this one (run()): in its blob.
  const std::optional<ShippedPayload> shipped = std::exchange(shipped_payload_, std::nullopt);
  PayloadHeader header;
  size_t releases_sent = 0;
  if (shipped) {
    header.blob_id = shipped->ref.id;
    header.blob_generation = shipped->ref.generation;
    header.blob_bytes = shipped->ref.bytes;
    header.blob_used = shipped->used;
    releases_sent = shipped->releases;
  } else {
    // Quit carries no releases (nobody maps anything after it): it always fits; nor does the
    // step that ships a large payload (its command names one blob: it always fits).
    static const std::vector<uint64_t> kNone;
    const std::vector<uint64_t>& releases =
        opcode == Opcode::Quit || shipping_ ? kNone : data_.pendingReleases();
    ByteWriter& framed = framed_;  // reused: no allocation on the step path once grown
    releases_sent = frame(framed, releases, payload);
    if (sizeof header + framed.size() <= kCommandBytes) {
      header.inline_bytes = framed.size();
      header.posted = post ? 1 : 0;
      std::memcpy(cb.payload[half] + sizeof header, framed.data(), framed.size());
    } else if (group_->spansNodes()) {
      throw InternalError(str(stepName(opcode), ": a payload of ", framed.size(),
                              " bytes was not shipped to the other nodes before its step"));
    } else {
      // Too large for the control block (long index lists): in a blob, which grows. Never
      // posted: the blob is rewritten by the next step.
      const BlobRef ref = writePayloadBlob(framed);
      header.blob_id = ref.id;
      header.blob_generation = ref.generation;
      header.blob_bytes = ref.bytes;
      header.blob_used = framed.size();
    }
  }
  std::memcpy(cb.payload[half], &header, sizeof header);
  cb.payload_bytes[half] = static_cast<uint32_t>(sizeof header + header.inline_bytes);
  cb.opcode[half] = static_cast<uint32_t>(opcode);
  data_.releasesSent(releases_sent);  // only now: a failure above must not forget them
  return header.posted != 0;
}

ByteReader StepRunner::readCommand(Opcode& opcode, size_t half, bool& posted) {
  ControlBlock& cb = group_->control();
  opcode = static_cast<Opcode>(cb.opcode[half]);
  PayloadHeader header;
  std::memcpy(&header, cb.payload[half], sizeof header);
  posted = header.posted != 0;
  ByteReader reader(cb.payload[half] + sizeof header, header.inline_bytes);
  if (header.inline_bytes == 0 && header.blob_id != 0) {
    const std::byte* bytes =
        data_.blobs().attach({header.blob_id, header.blob_generation, header.blob_bytes});
    blob_copy_.assign(bytes, bytes + header.blob_used);  // the payload, not the spare room
    reader = ByteReader(blob_copy_.data(), blob_copy_.size());
  }
  if (opcode != Opcode::Quit) {
    for (uint64_t id : reader.getVector<uint64_t>()) {
      data_.blobs().release(id);
      data_.forgetShipped(id);  // another node's copy of it
    }
  }
  return reader;
}

StepResult StepRunner::run(Opcode opcode, const ByteWriter& payload, const std::string& what,
                           bool post) {
  // Over several nodes a payload too large for the control block goes first, a step of its own.
  // (Not the ship step's own: its command always fits.)
  if (group_->spansNodes() && !shipping_ && !fitsControlBlock(payload)) {
    shipLargePayload(payload, what);
  }
  const uint64_t start_epoch = group_->barrier().epoch() + 1;  // of this step's CommandStart
  const bool posted = writeCommand(opcode, payload, start_epoch % 2, post);
  Waiter& waiter = stepWaiter(what);
  StepResult result;
  if (stepTimesOn()) beginStepTimes();
  try {
    {
      PhaseScope phase(Phase::StepStart);
      group_->barrier().arrive(waiter, BarrierSite::CommandStart);
    }
    // The master runs its own command as a worker reads it, from the command area.
    Opcode echoed;
    bool echoed_posted = false;
    ByteReader reader = readCommand(echoed, start_epoch % 2, echoed_posted);
    if (echoed != opcode || echoed_posted != posted) {
      throw InternalError(str(what, ": the command area holds another command than was written"));
    }
    {
      PhaseScope phase(Phase::Handler);
      result = execute(opcode, reader, waiter);
    }
    if (posted) {
      if (!result.status.ok()) {
        throw InternalError(
            str(what, " was posted, but failed on the master: ", result.status.message));
      }
      posted_ = what;
      return result;
    }
    writeStatus(result.status);
    {
      PhaseScope phase(Phase::StepEnd);
      group_->barrier().arrive(waiter, BarrierSite::CommandEnd);
    }
    if (stepTimesOn()) {
      publishStepTimes(start_epoch);
      timed_epoch_ = start_epoch;
    }
    posted_.clear();  // every rank passed this step's start: the posted ones are behind them
    shapes_.noteStep(group_->control(), group_->size());
  } catch (const PeerFailure& e) {
    // A rank that never passed this step's start died before it: while the master was idle (an
    // idle rank has already arrived at the next start: its barrier epoch does not tell), or while
    // it still ran a posted step the master had returned from.
    const int rank = e.rank();
    const bool between = rank >= 0 && rank < group_->size() && rank != group_->rank() &&
                         group_->control().slot(rank).started.load() < start_epoch;
    fatal_(e.what());
    if (between && !posted_.empty()) {
      throw PeerFailure(rank, str(e.what(), " (during or after ", posted_, ", before ", what, ")"));
    }
    throw PeerFailure(rank, between ? str(e.what(), " (between steps, before ", what, ")")
                                    : str(e.what(), " (during ", what, ")"));
  } catch (const std::exception& e) {
    fatal_(e.what());
    throw;
  }
  throwStatuses();
  return result;
}

void StepRunner::serve() {
  Waiter idle = group_->idleWaiter();  // no deadline: one serves every step
  while (true) {
    group_->barrier().arrive(idle, BarrierSite::CommandStart);
    const uint64_t epoch = group_->barrier().epoch();
    group_->control().slot(group_->rank()).started.store(epoch, std::memory_order_relaxed);
    Opcode opcode;
    bool posted = false;
    ByteReader payload = readCommand(opcode, epoch % 2, posted);
    if (opcode == Opcode::Quit) return;
    Waiter& waiter = stepWaiter(stepName(opcode));
    if (stepTimesOn()) beginStepTimes();
    Status status;
    {
      PhaseScope phase(Phase::Handler);
      status = execute(opcode, payload, waiter).status;
    }
    if (posted) {
      // Nobody reads a posted step's status: a failure can only end the session.
      if (!status.ok()) {
        throw InternalError(str(stepName(opcode), " was posted, but failed on rank ",
                                group_->rank(), ": ", status.message));
      }
      continue;
    }
    writeStatus(status);
    {
      PhaseScope phase(Phase::StepEnd);
      group_->barrier().arrive(waiter, BarrierSite::CommandEnd);
    }
    if (stepTimesOn()) publishStepTimes(epoch);
  }
}

void StepRunner::publishStepTimes(uint64_t start_epoch) {
  RankSlot& slot = group_->control().slot(group_->rank());
  slot.times = currentStepTimes();
  slot.times_epoch.store(start_epoch, std::memory_order_release);
}

std::vector<StepTimes> StepRunner::lastStepTimes(std::chrono::milliseconds timeout) {
  std::vector<StepTimes> out;
  if (timed_epoch_ == 0) return out;
  ControlBlock& cb = group_->control();
  Waiter waiter = group_->commandWaiter("reading the last step's times");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int r = 0; r < group_->size(); ++r) {
    // A rank publishes right after passing the step's end, which the master passed too: a wait
    // of microseconds, bounded all the same (a rank stopped there is reported, not waited for).
    while (cb.slot(r).times_epoch.load(std::memory_order_acquire) < timed_epoch_) {
      waiter.check();
      if (std::chrono::steady_clock::now() > deadline) {
        throw Timeout(str("rank ", r, " did not publish the last step's times within ",
                          timeout.count(), " ms"));
      }
      std::this_thread::yield();
    }
    out.push_back(cb.slot(r).times);
  }
  return out;
}

void StepRunner::quit() {
  writeCommand(Opcode::Quit, ByteWriter(), (group_->barrier().epoch() + 1) % 2, false);
  Waiter waiter = group_->commandWaiter("close");
  group_->barrier().arrive(waiter, BarrierSite::CommandStart);
}

void StepRunner::throwStatuses() {
  ControlBlock& cb = group_->control();
  int first = -1;
  std::string others;
  for (int r = 0; r < group_->size(); ++r) {
    if (cb.slot(r).status == 0) continue;
    if (first < 0) {
      first = r;
    } else {
      others += str(others.empty() ? "" : ", ", r);
    }
  }
  if (first < 0) return;
  const RankSlot& slot = cb.slot(first);
  std::string message = slot.message;
  if (!others.empty()) message += str(" (rank(s) ", others, " failed too)");
  switch (static_cast<ErrorKind>(slot.status)) {
    case ErrorKind::InvalidArgument:
      throw InvalidArgument(message);
    default:
      throw RankError(first, str("rank ", first, ": ", message));
  }
}

}  // namespace synk::detail
